package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// routeJSON is an HTTPRoute as the API returns it, in namespace "ns" unless NAME says "namespace/name".
// Each rule is its matches' JSON and sends requests to the InferencePool of the rule's own name, so
// that a test sees which rule won by the pool.
func routeJSON(name, created string, rules ...[2]string) string {
	namespace, name, ok := strings.Cut(name, "/")
	if !ok {
		namespace, name = "ns", namespace
	}
	var text []string
	for _, rule := range rules {
		text = append(text, fmt.Sprintf(
			`{"matches": %s, "backendRefs": [{"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": %q}]}`,
			cmp.Or(rule[1], "null"), rule[0]))
	}
	return fmt.Sprintf(`{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": {"name": %q, "namespace": %q, "creationTimestamp": %q, "generation": 1},
		"spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gateway"}],
		"rules": [%s]}, "status": {}}`, name, namespace, created, strings.Join(text, ", "))
}

func rule(pool, matches string) [2]string { return [2]string{pool, matches} }

const old, young = "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z"

func parse(t *testing.T, routes ...string) *routesConfig {
	t.Helper()
	config, err := parseRoutes([]byte(`{"routes": [` + strings.Join(routes, ", ") + `], "pools": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	return config
}

// where is the route and pool a request goes to ("ns/route ns/pool"), or "" where it matches no route.
func where(t *testing.T, config *routesConfig, method, target string, headers ...string) string {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for _, header := range headers {
		name, value, _ := strings.Cut(header, ": ")
		r.Header.Add(name, value)
	}
	route, rule := config.match(r)
	if route == nil {
		return ""
	}
	pool, err := backend(route, rule, func(int) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	return route.key() + " " + pool
}

func expect(t *testing.T, config *routesConfig, want, method, target string, headers ...string) {
	t.Helper()
	if got := where(t, config, method, target, headers...); got != want {
		t.Errorf("%s %s %v: went to %q, want %q", method, target, headers, got, want)
	}
}

func TestPathTypes(t *testing.T) {
	config := parse(t, routeJSON("r", old,
		rule("prefix", `[{"path": {"type": "PathPrefix", "value": "/v1"}}]`),
		rule("exact", `[{"path": {"type": "Exact", "value": "/v1/completions"}}]`),
		rule("regex", `[{"path": {"type": "RegularExpression", "value": "/v[0-9]+/comp.*"}}]`),
		rule("slash", `[{"path": {"type": "PathPrefix", "value": "/v2/"}}]`)))
	expect(t, config, "ns/r ns/exact", "POST", "/v1/completions")
	expect(t, config, "ns/r ns/regex", "POST", "/v1/completion")
	expect(t, config, "ns/r ns/regex", "POST", "/v3/completions")
	expect(t, config, "ns/r ns/prefix", "POST", "/v1")
	expect(t, config, "ns/r ns/prefix", "POST", "/v1/")
	expect(t, config, "ns/r ns/prefix", "POST", "/v1/models")
	expect(t, config, "ns/r ns/regex", "POST", "/v1/completions/x?stream=1")
	expect(t, config, "", "POST", "/v1x")
	expect(t, config, "", "POST", "/")
	expect(t, config, "ns/r ns/slash", "POST", "/v2")
	expect(t, config, "ns/r ns/slash", "POST", "/v2/chat")
	expect(t, config, "", "POST", "/v2x")
	expect(t, config, "", "POST", "/x/v1/completion") // a regular expression matches the whole path
}

func TestLongestPrefix(t *testing.T) {
	config := parse(t, routeJSON("r", old,
		rule("root", `[{"path": {"type": "PathPrefix", "value": "/"}}]`),
		rule("v1", `[{"path": {"type": "PathPrefix", "value": "/v1"}}]`),
		rule("completions", `[{"path": {"type": "PathPrefix", "value": "/v1/completions"}}]`)))
	expect(t, config, "ns/r ns/completions", "POST", "/v1/completions")
	expect(t, config, "ns/r ns/v1", "POST", "/v1/chat/completions")
	expect(t, config, "ns/r ns/root", "POST", "/v2/completions")
}

func TestDefaults(t *testing.T) {
	// A rule without matches matches every request; a match without a path any path.
	config := parse(t, routeJSON("r", old,
		rule("header", `[{"headers": [{"name": "x-model", "value": "m"}]}]`),
		rule("all", "")))
	expect(t, config, "ns/r ns/header", "GET", "/anything", "X-Model: m")
	expect(t, config, "ns/r ns/all", "GET", "/anything", "X-Model: n")
	expect(t, config, "ns/r ns/all", "DELETE", "/")
}

func TestHeaders(t *testing.T) {
	config := parse(t, routeJSON("r", old,
		rule("exact", `[{"headers": [{"name": "X-Gateway-Model-Name", "value": "llama"}]}]`),
		rule("regex", `[{"headers": [{"type": "RegularExpression", "name": "x-gateway-model-name", "value": "llama-[0-9]+"}]}]`),
		rule("two", `[{"headers": [{"name": "x-gateway-model-name", "value": "llama"}, {"type": "RegularExpression", "name": "x-tier", "value": "gold|silver"}]}]`)))
	expect(t, config, "ns/r ns/exact", "POST", "/", "x-gateway-model-name: llama")
	expect(t, config, "ns/r ns/two", "POST", "/", "X-Gateway-Model-Name: llama", "X-Tier: gold")
	expect(t, config, "ns/r ns/exact", "POST", "/", "X-Gateway-Model-Name: llama", "X-Tier: bronze")
	expect(t, config, "ns/r ns/exact", "POST", "/", "X-Gateway-Model-Name: llama", "X-Tier: golden")
	expect(t, config, "ns/r ns/regex", "POST", "/", "X-Gateway-Model-Name: llama-3")
	expect(t, config, "", "POST", "/", "X-Gateway-Model-Name: my-llama-3")
	expect(t, config, "", "POST", "/", "X-Gateway-Model-Name: Llama")
	expect(t, config, "", "POST", "/")
}

func TestQueryParams(t *testing.T) {
	config := parse(t, routeJSON("r", old,
		rule("none", `[{"path": {"type": "PathPrefix", "value": "/"}}]`),
		rule("exact", `[{"queryParams": [{"name": "tier", "value": "gold"}]}]`),
		rule("regex", `[{"queryParams": [{"type": "RegularExpression", "name": "tier", "value": "s.*"}]}]`)))
	expect(t, config, "ns/r ns/exact", "GET", "/x?tier=gold")
	expect(t, config, "ns/r ns/regex", "GET", "/x?tier=silver")
	expect(t, config, "ns/r ns/none", "GET", "/x?Tier=gold") // parameter names match exactly
	expect(t, config, "ns/r ns/none", "GET", "/x?tier=bronze")
	expect(t, config, "ns/r ns/exact", "GET", "/x?tier=gold&tier=silver") // the first value counts
}

func TestPrecedence(t *testing.T) {
	config := parse(t, routeJSON("r", old,
		rule("query", `[{"headers": [{"name": "a", "value": "1"}], "queryParams": [{"name": "q", "value": "1"}]}]`),
		rule("headers", `[{"headers": [{"name": "a", "value": "1"}, {"name": "b", "value": "1"}]}]`),
		rule("method", `[{"method": "POST"}]`),
		rule("path", `[{"path": {"type": "PathPrefix", "value": "/v1"}}]`)))
	// A longer path before a method, a method before headers, more headers before query parameters.
	expect(t, config, "ns/r ns/path", "POST", "/v1?q=1", "A: 1", "B: 1")
	expect(t, config, "ns/r ns/method", "POST", "/?q=1", "A: 1", "B: 1")
	expect(t, config, "ns/r ns/headers", "GET", "/?q=1", "A: 1", "B: 1")
	expect(t, config, "ns/r ns/query", "GET", "/?q=1", "A: 1")
	expect(t, config, "", "GET", "/?q=1")
}

func TestBestMatchOfRule(t *testing.T) {
	// A rule ranks by the best of its matches the request meets.
	config := parse(t, routeJSON("r", old,
		rule("first", `[{"path": {"type": "PathPrefix", "value": "/"}}]`),
		rule("second", `[{"path": {"type": "PathPrefix", "value": "/"}}, {"path": {"type": "Exact", "value": "/v1"}}]`)))
	expect(t, config, "ns/r ns/second", "POST", "/v1")
	expect(t, config, "ns/r ns/first", "POST", "/v2")
}

func TestTies(t *testing.T) {
	same := `[{"headers": [{"name": "x-model", "value": "m"}]}]`
	// Between routes: the oldest, then the first by namespace/name, wherever they are in the list.
	config := parse(t, routeJSON("a/young", young, rule("a", same)), routeJSON("z/old", old, rule("z", same)))
	expect(t, config, "z/old z/z", "POST", "/", "X-Model: m")
	config = parse(t, routeJSON("b/r", old, rule("b", same)), routeJSON("a/s", old, rule("a", same)),
		routeJSON("a/r", old, rule("r", same)))
	expect(t, config, "a/r a/r", "POST", "/", "X-Model: m")
	// Within a route: the first rule.
	config = parse(t, routeJSON("r", old, rule("one", same), rule("two", same)))
	expect(t, config, "ns/r ns/one", "POST", "/", "X-Model: m")
}

func TestCreationTimestampFromTheAPI(t *testing.T) {
	var r httpRoute
	if err := json.Unmarshal([]byte(routeJSON("r", "2025-03-04T05:06:07Z")), &r); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC); !r.Metadata.CreationTimestamp.Equal(want) {
		t.Errorf("creationTimestamp %v, want %v", r.Metadata.CreationTimestamp, want)
	}
}

func TestInvalidRoutes(t *testing.T) {
	for _, matches := range []string{
		`[{"path": {"type": "RegularExpression", "value": "("}}]`,
		`[{"path": {"type": "Prefix", "value": "/"}}]`,
		`[{"headers": [{"type": "PathPrefix", "name": "a", "value": "/"}]}]`,
	} {
		if _, err := parseRoutes([]byte(`{"routes": [` + routeJSON("r", old, rule("p", matches)) + `]}`)); err == nil {
			t.Errorf("%s: no error", matches)
		}
	}
}

func weights(refs string) []backendRef {
	var parsed []backendRef
	if err := json.Unmarshal([]byte(refs), &parsed); err != nil {
		panic(err)
	}
	return parsed
}

func TestWeights(t *testing.T) {
	refs := weights(`[{"name": "zero", "weight": 0}, {"name": "two", "weight": 2}, {"name": "default"}]`)
	var chosen []string
	for n := range 3 {
		ref, ok := chooseWeighted(refs, func(total int) int {
			if total != 3 {
				t.Fatalf("total weight %d, want 3", total)
			}
			return n
		})
		if !ok {
			t.Fatal("none chosen")
		}
		chosen = append(chosen, ref.Name)
	}
	if got := strings.Join(chosen, " "); got != "two two default" {
		t.Errorf("chose %s, want two two default", got)
	}
	for _, refs := range []string{`[]`, `[{"name": "a", "weight": 0}, {"name": "b", "weight": 0}]`} {
		if ref, ok := chooseWeighted(weights(refs), func(int) int { panic("no choice to make") }); ok {
			t.Errorf("%s: chose %s", refs, ref.Name)
		}
	}
}

func TestBackend(t *testing.T) {
	r := &httpRoute{}
	r.Metadata.Namespace, r.Metadata.Name = "ns", "r"
	first := func(int) int { return 0 }
	for refs, want := range map[string]string{
		`[{"kind": "InferencePool", "name": "p"}]`:                                     "ns/p",
		`[{"group": "x", "kind": "InferencePool", "name": "p", "namespace": "other"}]`: "other/p",
		`[{"kind": "InferencePool", "name": "p", "weight": 0}]`:                        "500",
		`[{"name": "svc", "port": 80}]`:                                                "ns/svc:80",
		`[{"kind": "Service", "name": "svc", "namespace": "other", "port": 80}]`:       "other/svc:80",
		`[{"name": "svc"}]`:                            "500",
		`[{"kind": "Other", "name": "x", "port": 80}]`: "500",
		`[]`: "500",
	} {
		got, err := backend(r, &routeRule{BackendRefs: weights(refs)}, first)
		var status *statusError
		if errors.As(err, &status) {
			got = fmt.Sprint(status.status)
		} else if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", refs, got, want)
		}
	}
}

// TestGatewayAnswers runs the gateway on a configuration file that changes between requests.
func TestGatewayAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gateway.json")
	write := func(config string) {
		staged := file + ".new"
		if err := os.WriteFile(staged, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(staged, file); err != nil {
			t.Fatal(err)
		}
	}
	upstream, err := newUpstream("http")
	if err != nil {
		t.Fatal(err)
	}
	g := &routesGateway{upstream: upstream, file: watchedFile{path: file}, servers: map[string]*pickers{}}
	ask := func(target string) (int, http.Header, string) {
		w := httptest.NewRecorder()
		handler(g.serve).ServeHTTP(w, httptest.NewRequest("POST", target, strings.NewReader(`{"model": "m"}`)))
		return w.Code, w.Header(), w.Body.String()
	}

	write(`{"routes": [], "pools": {}}`)
	status, header, body := ask("/v1/completions")
	var answer struct {
		Error struct {
			Message string
			Code    int
		}
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || status != 404 ||
		answer.Error.Message != "no route matches" || answer.Error.Code != 404 ||
		header.Get("Content-Type") != "application/json" {
		t.Errorf("no route: %d %q (%v)", status, body, err)
	}

	write(`{"routes": [` + routeJSON("r", old, rule("p", `[{"path": {"value": "/v1"}}]`)) + `],
		"pools": {"ns/q": "@` + file + `.none"}}`)
	if status, header, body := ask("/v1/completions"); status != 500 || !strings.Contains(body, "ns/p") ||
		header.Get("x-stand-in-route") != "ns/r" || header.Get("x-stand-in-pool") != "ns/p" {
		t.Errorf("pool without pickers: %d %v %q", status, header, body)
	}
	if status, _, _ := ask("/v2/completions"); status != 404 {
		t.Errorf("no route: %d", status)
	}

	write(`{"routes": [` + routeJSON("r", old, rule("pool", `[{"path": {"value": "/v1"}}]`)) + `],
		"pools": {"ns/pool": "@` + file + `.none"}}`)
	if status, header, body := ask("/v1/completions"); status != 502 || header.Get("x-stand-in-pool") != "ns/pool" {
		t.Errorf("pool whose pickers file is missing: %d %v %q", status, header, body)
	}

	// A Service backend: straight to its endpoint, the answer as it gave it; none ready, 503.
	listing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"object": "list", "asked": %q}`, r.URL.Path)
	}))
	defer listing.Close()
	service := `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "models",
		"namespace": "gw", "creationTimestamp": "` + old + `"}, "spec": {"rules": [{"matches": [{"path":
		{"type": "Exact", "value": "/v1/models"}}], "backendRefs": [{"name": "models", "port": 8080}]}]}}`
	write(`{"routes": [` + service + `], "services": {"gw/models:8080": "` + listing.Listener.Addr().String() + `"}}`)
	if status, header, body := ask("/v1/models"); status != 200 || body != `{"object": "list", "asked": "/v1/models"}` ||
		header.Get("x-stand-in-service") != "gw/models:8080" || header.Get("Content-Type") != "application/json" {
		t.Errorf("Service backend: %d %v %q", status, header, body)
	}
	write(`{"routes": [` + service + `]}`)
	if status, _, body := ask("/v1/models"); status != 503 || !strings.Contains(body, "gw/models:8080") {
		t.Errorf("Service without an endpoint: %d %q", status, body)
	}

	write(`{"routes": [` + routeJSON("r", old, rule("q", `[{"path": {"type": "Regex", "value": "/v1"}}]`)) + `]}`)
	if status, _, body := ask("/v1/completions"); status != 502 || !strings.Contains(body, "Regex") {
		t.Errorf("invalid configuration: %d %q", status, body)
	}
}
