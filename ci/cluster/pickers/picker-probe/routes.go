package main

// routes-gateway stands in for a shared Gateway in front of several InferencePools: it routes each
// request as the Gateway API's HTTPRoutes attached to it say, to an InferencePool, and from there does
// what gateway does with that pool's pickers; or to a Service, straight to the address it is given for it. Before routing it may call a body-based router (bbr.go),
// which copies the model named in the JSON body into a header the routes match on, as GIE's guides set
// a Gateway up. The response carries the route and the pool in x-stand-in-route and x-stand-in-pool; a
// request no route matches gets 404, with a JSON error as OpenAI-style clients read them.
//
// What it routes by is a JSON file (routesConfig) that whoever started it rewrites, atomically, as it
// learns the routes and pools from the Kubernetes API; it is read again when it changes. Matching and
// precedence follow gateway.networking.k8s.io/v1 HTTPRoute. Where the spec leaves a choice to the
// implementation, this one does what Envoy Gateway does: a RegularExpression path ranks below Exact and
// above PathPrefix, and a regular expression must match the whole path, header or parameter value.
// Hostnames, parentRefs and filters are not looked at: whoever writes the file lists only the routes of
// this Gateway, and the requests name no host.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// The Gateway API's match types.
const (
	exact             = "Exact"
	pathPrefix        = "PathPrefix"
	regularExpression = "RegularExpression"
)

// serveRoutes serves the gateway that routes as the file CONFIG says on LISTEN until the process ends,
// calling the pods in SCHEME.
func serveRoutes(config, listen, scheme string) error {
	upstream, err := newUpstream(scheme)
	if err != nil {
		return err
	}
	g := &routesGateway{upstream: upstream, file: watchedFile{path: config}, servers: map[string]*pickers{}}
	return serve(listen, g.serve)
}

// routesConfig is what the gateway knows of the Gateway it stands in for: the body-based router to call
// first ("": none), the HTTPRoutes attached to it as the API returns them, each InferencePool's pickers by
// "NAMESPACE/NAME", an address or "@FILE" as gateway takes them, and an endpoint of each Service backend
// by "NAMESPACE/NAME:PORT".
type routesConfig struct {
	BBR      string            `json:"bbr"`
	Routes   []*httpRoute      `json:"routes"`
	Pools    map[string]string `json:"pools"`
	Services map[string]string `json:"services"`
}

type routesGateway struct {
	upstream *upstream
	mu       sync.Mutex
	file     watchedFile
	config   *routesConfig
	invalid  error // what is wrong with the file as last read
	// The pickers (and body-based routers) by their address or @FILE, kept across configurations: each
	// pool's round robin and connections are its own and outlive a change of the routes.
	servers map[string]*pickers
}

func (g *routesGateway) serve(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	config, err := g.load()
	if err != nil {
		return err
	}
	if config.BBR != "" {
		var immediate *extproc.ImmediateResponse
		if r, body, immediate, err = routeByBody(ctx, g.pickers(config.BBR), r, body); err != nil {
			return fmt.Errorf("body-based router %s: %w", config.BBR, err)
		}
		if immediate != nil {
			writeImmediate(w, immediate)
			return nil
		}
	}
	route, rule := config.match(r)
	if route == nil {
		return &statusError{http.StatusNotFound, "no route matches"}
	}
	w.Header().Set("x-stand-in-route", route.key())
	pool, err := backend(route, rule, rand.IntN)
	if err != nil {
		return err
	}
	if strings.Contains(pool, ":") { // a Service's port
		w.Header().Set("x-stand-in-service", pool)
		endpoint, ok := config.Services[pool]
		if !ok {
			return &statusError{http.StatusServiceUnavailable, fmt.Sprintf("Service %s has no ready endpoint", pool)}
		}
		return g.upstream.direct(ctx, w, r, endpoint, body)
	}
	w.Header().Set("x-stand-in-pool", pool)
	pickers, ok := config.Pools[pool]
	if !ok {
		return &statusError{http.StatusInternalServerError, fmt.Sprintf("InferencePool %s has no pickers", pool)}
	}
	return g.upstream.throughPicker(ctx, w, r, body, g.pickers(pickers))
}

// load is the configuration, the file read again first if it changed.
func (g *routesGateway) load() (*routesConfig, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	text, changed, err := g.file.changed()
	if err != nil {
		return nil, err
	}
	if changed {
		g.config, g.invalid = parseRoutes(text)
	}
	if g.invalid != nil {
		return nil, fmt.Errorf("%s: %w", g.file.path, g.invalid)
	}
	return g.config, nil
}

// pickers are the ext-proc servers SPEC names, the same ones each time.
func (g *routesGateway) pickers(spec string) *pickers {
	g.mu.Lock()
	defer g.mu.Unlock()
	servers, ok := g.servers[spec]
	if !ok {
		servers = newPickers(spec)
		g.servers[spec] = servers
	}
	return servers
}

func parseRoutes(text []byte) (*routesConfig, error) {
	var config routesConfig
	if err := json.Unmarshal(text, &config); err != nil {
		return nil, err
	}
	for _, route := range config.Routes {
		if err := route.compile(); err != nil {
			return nil, fmt.Errorf("HTTPRoute %s: %w", route.key(), err)
		}
	}
	return &config, nil
}

// httpRoute is what the gateway reads of a gateway.networking.k8s.io/v1 HTTPRoute.
type httpRoute struct {
	Metadata struct {
		Name              string    `json:"name"`
		Namespace         string    `json:"namespace"`
		CreationTimestamp time.Time `json:"creationTimestamp"`
	} `json:"metadata"`
	Spec struct {
		Rules []*routeRule `json:"rules"`
	} `json:"spec"`
}

type routeRule struct {
	Matches     []*routeMatch `json:"matches"`
	BackendRefs []backendRef  `json:"backendRefs"`
}

// routeMatch is one of a rule's matches: a request meets it if it meets every condition in it.
type routeMatch struct {
	Path        *stringMatch   `json:"path"`
	Headers     []*stringMatch `json:"headers"`
	QueryParams []*stringMatch `json:"queryParams"`
	Method      string         `json:"method"`
}

// stringMatch is a path, header or query parameter match: Name (a header's or parameter's) is Value, or
// matches it as Type says.
type stringMatch struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	regexp *regexp.Regexp
}

type backendRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Port      *int   `json:"port"`
	Weight    *int   `json:"weight"`
}

func (r *httpRoute) key() string {
	return r.Metadata.Namespace + "/" + r.Metadata.Name
}

// compile fills in the defaults the API server fills in (a rule without matches matches every path, a
// match without a path any path) and compiles the regular expressions.
func (r *httpRoute) compile() error {
	for i, rule := range r.Spec.Rules {
		if len(rule.Matches) == 0 {
			rule.Matches = []*routeMatch{{}}
		}
		for j, match := range rule.Matches {
			if err := match.compile(); err != nil {
				return fmt.Errorf("rule %d match %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func (m *routeMatch) compile() error {
	if m.Path == nil {
		m.Path = &stringMatch{}
	}
	m.Path.Type, m.Path.Value = cmp.Or(m.Path.Type, pathPrefix), cmp.Or(m.Path.Value, "/")
	if err := m.Path.compile(exact, pathPrefix, regularExpression); err != nil {
		return fmt.Errorf("path: %w", err)
	}
	for _, match := range slices.Concat(m.Headers, m.QueryParams) {
		if err := match.compile(exact, regularExpression); err != nil {
			return fmt.Errorf("%s: %w", match.Name, err)
		}
	}
	return nil
}

// compile checks the match's type, Exact if none, against TYPES, and compiles its regular expression.
func (s *stringMatch) compile(types ...string) error {
	s.Type = cmp.Or(s.Type, exact)
	if !slices.Contains(types, s.Type) {
		return fmt.Errorf("match type %q is none of %s", s.Type, strings.Join(types, ", "))
	}
	if s.Type == regularExpression {
		var err error
		s.regexp, err = regexp.Compile("^(?:" + s.Value + ")$")
		return err
	}
	return nil
}

// meets tells whether the request meets every condition of the match. Header names are matched in any
// case, parameter names exactly; a header given more than once is its values joined by commas, a
// parameter given more than once its first value.
func (m *routeMatch) meets(r *http.Request) bool {
	if m.Method != "" && m.Method != r.Method {
		return false
	}
	if !m.Path.meets(r.URL.Path) {
		return false
	}
	for _, header := range m.Headers {
		values := r.Header.Values(header.Name)
		if len(values) == 0 || !header.meets(strings.Join(values, ",")) {
			return false
		}
	}
	query := r.URL.Query()
	for _, param := range m.QueryParams {
		values := query[param.Name]
		if len(values) == 0 || !param.meets(values[0]) {
			return false
		}
	}
	return true
}

func (s *stringMatch) meets(value string) bool {
	switch s.Type {
	case regularExpression:
		return s.regexp.MatchString(value)
	case pathPrefix:
		return hasPathPrefix(value, s.Value)
	default:
		return value == s.Value
	}
}

// hasPathPrefix tells whether PATH begins with PREFIX's elements, a trailing slash in PREFIX ignored:
// "/v1" and "/v1/" are prefixes of "/v1" and "/v1/x", not of "/v1x".
func hasPathPrefix(path, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// candidate is a match the request meets, by its route and the indices of its rule and of itself in the
// rule, with what ranks it.
type candidate struct {
	route                        *httpRoute
	rule, match                  int
	pathType, pathLength, method int
	headers, queryParams         int
}

// pathTypes rank the path match types, the most specific highest.
var pathTypes = map[string]int{exact: 2, regularExpression: 1, pathPrefix: 0}

func newCandidate(route *httpRoute, rule, match int) candidate {
	m := route.Spec.Rules[rule].Matches[match]
	method := 0
	if m.Method != "" {
		method = 1
	}
	return candidate{route: route, rule: rule, match: match, pathType: pathTypes[m.Path.Type],
		pathLength: len(m.Path.Value), method: method, headers: len(m.Headers), queryParams: len(m.QueryParams)}
}

// precedes orders candidates as the Gateway API orders matches, the one that wins first: an Exact path,
// then the longest path, then one with a method, then the most headers, then the most query parameters;
// between routes the oldest, then the first by namespace/name; within a route the first rule, and the
// first match in it.
func precedes(a, b candidate) int {
	return cmp.Or(
		cmp.Compare(b.pathType, a.pathType),
		cmp.Compare(b.pathLength, a.pathLength),
		cmp.Compare(b.method, a.method),
		cmp.Compare(b.headers, a.headers),
		cmp.Compare(b.queryParams, a.queryParams),
		a.route.Metadata.CreationTimestamp.Compare(b.route.Metadata.CreationTimestamp),
		strings.Compare(a.route.key(), b.route.key()),
		cmp.Compare(a.rule, b.rule),
		cmp.Compare(a.match, b.match))
}

// match is the route and the rule the request goes by: that of the first match it meets as precedes
// orders them, or nil.
func (c *routesConfig) match(r *http.Request) (*httpRoute, *routeRule) {
	var met []candidate
	for _, route := range c.Routes {
		for i, rule := range route.Spec.Rules {
			for j, match := range rule.Matches {
				if match.meets(r) {
					met = append(met, newCandidate(route, i, j))
				}
			}
		}
	}
	if len(met) == 0 {
		return nil, nil
	}
	first := slices.MinFunc(met, precedes)
	return first.route, first.route.Spec.Rules[first.rule]
}

// backend is the InferencePool ("NAMESPACE/NAME") the rule sends a request to: one of its backendRefs,
// chosen at random in proportion to their weights with intN (rand.IntN). A rule with no backendRef to
// send to, or one that sends it to something else than an InferencePool, fails the request with 500,
// as the spec says.
func backend(route *httpRoute, rule *routeRule, intN func(int) int) (string, error) {
	ref, ok := chooseWeighted(rule.BackendRefs, intN)
	if !ok {
		return "", &statusError{http.StatusInternalServerError,
			fmt.Sprintf("HTTPRoute %s: the matching rule has no backendRef of positive weight", route.key())}
	}
	pool := cmp.Or(ref.Namespace, route.Metadata.Namespace) + "/" + ref.Name
	switch {
	case ref.Kind == "InferencePool":
		return pool, nil
	case cmp.Or(ref.Kind, "Service") == "Service" && ref.Port != nil:
		return fmt.Sprintf("%s:%d", pool, *ref.Port), nil
	}
	return "", &statusError{http.StatusInternalServerError,
		fmt.Sprintf("HTTPRoute %s: backendRef %s is a %s without a port, neither an InferencePool nor a "+
			"Service's port", route.key(), pool, cmp.Or(ref.Kind, "Service"))}
}

// chooseWeighted is one of REFS at random, each as likely as its weight (1 if none; 0: never), and
// false if none has a positive weight.
func chooseWeighted(refs []backendRef, intN func(int) int) (backendRef, bool) {
	total := 0
	for _, ref := range refs {
		total += ref.weight()
	}
	if total == 0 {
		return backendRef{}, false
	}
	n := intN(total)
	for _, ref := range refs {
		if n < ref.weight() {
			return ref, true
		}
		n -= ref.weight()
	}
	panic("unreachable: n < total")
}

func (ref backendRef) weight() int {
	if ref.Weight == nil {
		return 1
	}
	return max(*ref.Weight, 0)
}
