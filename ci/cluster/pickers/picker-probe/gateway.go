package main

// gateway is what an ext-proc gateway (Envoy, as GKE's, Istio's and kgateway's are) does with an
// endpoint picker, on one HTTP listener: each request's headers and body go to the picker; the request,
// with the headers the picker set and the body it forwards, goes to the endpoint it names
// (x-gateway-destination-endpoint); the response's headers and body go back through the picker (which
// counts what it sent where) to the client, streamed as they come. A request the picker answers itself
// (429, 503) gets that answer. The response carries the chosen endpoint and prefill host in
// x-stand-in-destination and x-stand-in-prefiller, for tests to see where each request went, and the
// model the engine was asked for in x-stand-in-model.
//
// The picker is one address, or "@FILE": a file of picker addresses, one a line, that whoever started
// the gateway rewrites as the pickers' pods come and go (what a gateway learns from the picker Service's
// ready endpoints). The gateway reads it again when it changes and sends each request to the next
// picker in turn, named in x-stand-in-picker; with none listed, or when that picker fails the request,
// the request fails (the InferencePool's failureMode FailClose): no retry elsewhere, as Envoy's ext-proc
// filter does not retry.
//
// routes-gateway (routes.go) is this gateway in front of several pools, routing first: once it knows
// the pool, it does with the pool's pickers what this one does with its only pool's (throughPicker).

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
)

const (
	destinationHeader = "x-gateway-destination-endpoint"
	prefillHeader     = "x-prefiller-host-port"
	requestTimeout    = 5 * time.Minute
)

// serveGateway serves the gateway in front of one pool's pickers (an address, or "@FILE") on LISTEN until
// the process ends, calling the pods in SCHEME.
func serveGateway(picker, listen, scheme string) error {
	upstream, err := newUpstream(scheme)
	if err != nil {
		return err
	}
	pickers := newPickers(picker)
	return serve(listen, func(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		return upstream.throughPicker(ctx, w, r, body, pickers)
	})
}

// serve listens on LISTEN, prints the address for whoever started the gateway (LISTEN's port may be 0),
// and serves each request with HANDLE until the process ends.
func serve(listen string, handle handler) error {
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().String())
	server := &http.Server{Handler: handle, ReadHeaderTimeout: 10 * time.Second}
	return server.Serve(listener)
}

// handler serves one request; what it fails with, the client gets: a statusError's own answer, else 502.
type handler func(ctx context.Context, w http.ResponseWriter, r *http.Request) error

func (h handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := h(ctx, w, r); err != nil {
		log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		var answer *statusError
		if errors.As(err, &answer) {
			answer.write(w)
			return
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// statusError is a request the gateway answers itself, as a gateway answers one no route matches: the
// status, and a JSON body in the shape OpenAI-style clients read errors in.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

func (e *statusError) write(w http.ResponseWriter) {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	body.Error.Message, body.Error.Code = e.message, e.status
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(body)
}

// watchedFile is a file whoever started the gateway rewrites while it runs (atomically, by renaming).
type watchedFile struct {
	path string
	read time.Time
	size int64
}

// changed is the file's text and true if its modification time or size changed since the last time it
// was read (the first time: always).
func (f *watchedFile) changed() ([]byte, bool, error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return nil, false, err
	}
	if info.ModTime().Equal(f.read) && info.Size() == f.size {
		return nil, false, nil
	}
	text, err := os.ReadFile(f.path)
	if err != nil {
		return nil, false, err
	}
	f.read, f.size = info.ModTime(), info.Size()
	return text, true, nil
}

// pickers are the picker addresses the gateway sends requests to, in turn.
type pickers struct {
	mu        sync.Mutex
	file      *watchedFile // nil: the addresses are fixed
	addresses []string
	next      int
	conns     map[string]*grpc.ClientConn
}

// newPickers are the pickers SPEC names: one address, or "@FILE", a file of addresses.
func newPickers(spec string) *pickers {
	p := &pickers{conns: map[string]*grpc.ClientConn{}}
	if file, ok := strings.CutPrefix(spec, "@"); ok {
		p.file = &watchedFile{path: file}
	} else {
		p.addresses = []string{spec}
	}
	return p
}

// choose is the next picker and a connection to it, the file read again first if it changed.
func (p *pickers) choose() (string, *grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file != nil {
		text, changed, err := p.file.changed()
		if err != nil {
			return "", nil, err
		}
		if changed {
			p.addresses = strings.Fields(string(text))
		}
	}
	if len(p.addresses) == 0 {
		return "", nil, errors.New("no picker is ready")
	}
	address := p.addresses[p.next%len(p.addresses)]
	p.next++
	conn, ok := p.conns[address]
	if !ok {
		var err error
		if conn, err = dial(address); err != nil {
			return "", nil, err
		}
		p.conns[address] = conn
	}
	return address, conn, nil
}

// upstream is how the gateway calls the pods: in scheme, "https" as a gateway's backend TLS does, the
// pods' certificate not verified (it names no address of the test's).
type upstream struct {
	scheme string
	client *http.Client
}

func newUpstream(scheme string) (*upstream, error) {
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("scheme %q: http or https", scheme)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: requestTimeout,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test pods' certificates
	return &upstream{scheme: scheme, client: &http.Client{Transport: transport}}, nil
}

// throughPicker is what the gateway does with a request (its body already read) once it knows the pool:
// the next of the pool's pickers chooses the endpoint, the request goes there, and the response goes
// back through that picker.
func (u *upstream) throughPicker(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte,
	pickers *pickers) error {
	picker, conn, err := pickers.choose()
	if err != nil {
		return err
	}
	w.Header().Set("x-stand-in-picker", picker)
	stream, err := extproc.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		return err
	}
	defer stream.CloseSend() //nolint:errcheck // the stream ends with the request
	reply, err := exchange(stream, r, body)
	if err != nil {
		return err
	}
	if immediate := reply.GetImmediateResponse(); immediate != nil {
		writeImmediate(w, immediate)
		return nil
	}
	set := setHeaders(reply.GetRequestHeaders().GetResponse().GetHeaderMutation())
	forwarded, err := requestBody(stream, body)
	if err != nil {
		return err
	}
	destination := strings.TrimSpace(strings.Split(set[destinationHeader], ",")[0])
	if destination == "" {
		return errors.New("the picker named no endpoint")
	}
	if model := bodyModel(forwarded); model != "" {
		w.Header().Set("x-stand-in-model", model)
	}
	response, err := u.forward(ctx, r, destination, set, forwarded)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	return respond(stream, w, response, destination, set[prefillHeader])
}

// direct sends the request to ENDPOINT (a Service backend's) as it came, and its answer back.
func (u *upstream) direct(ctx context.Context, w http.ResponseWriter, r *http.Request, endpoint string,
	body []byte) error {
	response, err := u.forward(ctx, r, endpoint, nil, body)
	if err != nil {
		return err
	}
	defer response.Body.Close()
	for name, values := range response.Header {
		w.Header()[name] = values
	}
	w.Header().Set("x-stand-in-destination", endpoint)
	w.WriteHeader(response.StatusCode)
	_, err = io.Copy(w, response.Body)
	return err
}

// bodyModel is the model a JSON request body names ("": none), as the engine reads it: the picker may have
// rewritten it (an InferenceModelRewrite) and rewrites it back in the response, so only the request shows it.
func bodyModel(body []byte) string {
	var request struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(body, &request) != nil {
		return ""
	}
	return request.Model
}

// exchange sends the request's headers and body over the ext-proc stream as Envoy does (the pseudo
// headers first, names in lower case, the whole body in one message) and returns the first answer.
func exchange(stream extproc.ExternalProcessor_ProcessClient, r *http.Request, body []byte) (
	*extproc.ProcessingResponse, error) {
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: requestHeaders(r)}}}); err != nil {
		return nil, err
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: body, EndOfStream: true}}}); err != nil {
		return nil, err
	}
	return stream.Recv()
}

// requestHeaders are R's headers as Envoy sends them: the pseudo headers first, names in lower case.
func requestHeaders(r *http.Request) *corev3.HeaderMap {
	headers := []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte(r.Method)}, {Key: ":path", RawValue: []byte(r.URL.RequestURI())},
		{Key: ":authority", RawValue: []byte(r.Host)}, {Key: ":scheme", RawValue: []byte("http")},
	}
	for name, values := range r.Header {
		headers = append(headers, &corev3.HeaderValue{Key: strings.ToLower(name), RawValue: []byte(strings.Join(values, ","))})
	}
	return &corev3.HeaderMap{Headers: headers}
}

// exchangeHeaders sends the headers of a request without a body, ending the stream, as Envoy does, and
// returns the answer.
func exchangeHeaders(stream extproc.ExternalProcessor_ProcessClient, r *http.Request) (
	*extproc.ProcessingResponse, error) {
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: requestHeaders(r), EndOfStream: true}}}); err != nil {
		return nil, err
	}
	return stream.Recv()
}

// writeImmediate answers the client with what an ext-proc server answered itself (a picker's 429 or 503,
// the body-based router's 400).
func writeImmediate(w http.ResponseWriter, immediate *extproc.ImmediateResponse) {
	w.WriteHeader(int(immediate.GetStatus().GetCode()))
	_, _ = w.Write(immediate.GetBody())
}

// setHeaders are the headers a mutation sets, names in lower case.
func setHeaders(mutation *extproc.HeaderMutation) map[string]string {
	set := map[string]string{}
	for _, option := range mutation.GetSetHeaders() {
		set[strings.ToLower(option.GetHeader().GetKey())] = headerValue(option.GetHeader())
	}
	return set
}

// forward sends the request to the endpoint with the headers the picker set and the body it forwards.
func (u *upstream) forward(ctx context.Context, r *http.Request, destination string, set map[string]string,
	body []byte) (*http.Response, error) {
	request, err := http.NewRequestWithContext(ctx, r.Method, u.scheme+"://"+destination+r.URL.RequestURI(),
		bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	request.Header = r.Header.Clone()
	request.Header.Set("Content-Length", strconv.Itoa(len(body)))
	request.ContentLength = int64(len(body))
	for name, value := range set {
		if !strings.HasPrefix(name, ":") && name != "content-length" {
			request.Header.Set(name, value)
		}
	}
	response, err := u.client.Do(request)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", destination, err)
	}
	return response, nil
}

// requestBody is the body the picker forwards: whole, or streamed back in chunks until end of stream.
func requestBody(stream extproc.ExternalProcessor_ProcessClient, original []byte) ([]byte, error) {
	var forwarded []byte
	for {
		reply, err := stream.Recv()
		if err != nil {
			return nil, err
		}
		mutation := reply.GetRequestBody().GetResponse().GetBodyMutation()
		if streamed := mutation.GetStreamedResponse(); streamed != nil {
			forwarded = append(forwarded, streamed.GetBody()...)
			if !streamed.GetEndOfStream() {
				continue
			}
			return forwarded, nil
		}
		if mutation.GetBody() != nil {
			return mutation.GetBody(), nil
		}
		return original, nil
	}
}

// respond sends the response's headers and body through the picker to the client, each chunk as the
// engine sends it.
func respond(stream extproc.ExternalProcessor_ProcessClient, w http.ResponseWriter, response *http.Response,
	destination, prefill string) error {
	headers := []*corev3.HeaderValue{{Key: ":status", RawValue: []byte(strconv.Itoa(response.StatusCode))}}
	for name, values := range response.Header {
		headers = append(headers, &corev3.HeaderValue{Key: strings.ToLower(name), RawValue: []byte(strings.Join(values, ","))})
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseHeaders{
		ResponseHeaders: &extproc.HttpHeaders{Headers: &corev3.HeaderMap{Headers: headers}}}}); err != nil {
		return err
	}
	reply, err := stream.Recv()
	if err != nil {
		return err
	}
	for name, values := range response.Header {
		if name != "Content-Length" {
			w.Header()[name] = values
		}
	}
	for _, option := range reply.GetResponseHeaders().GetResponse().GetHeaderMutation().GetSetHeaders() {
		w.Header().Set(option.GetHeader().GetKey(), headerValue(option.GetHeader()))
	}
	w.Header().Set("x-stand-in-destination", destination)
	if prefill != "" {
		w.Header().Set("x-stand-in-prefiller", prefill)
	}
	w.WriteHeader(response.StatusCode)
	flusher, _ := w.(http.Flusher)

	// The engine's chunks go to the picker as they come; what it sends back goes to the client.
	sent := make(chan error, 1)
	go func() {
		buffer := make([]byte, 32*1024)
		for {
			n, readErr := response.Body.Read(buffer)
			end := readErr != nil
			if n > 0 || end {
				chunk := append([]byte(nil), buffer[:n]...)
				if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_ResponseBody{
					ResponseBody: &extproc.HttpBody{Body: chunk, EndOfStream: end}}}); err != nil {
					sent <- err
					return
				}
			}
			if end {
				if errors.Is(readErr, io.EOF) {
					readErr = nil
				}
				sent <- readErr
				return
			}
		}
	}()
	for {
		reply, err := stream.Recv()
		if err != nil {
			return err
		}
		mutation := reply.GetResponseBody().GetResponse().GetBodyMutation()
		streamed := mutation.GetStreamedResponse()
		if streamed == nil {
			return fmt.Errorf("the picker answered a streamed response body with %s", compact(reply))
		}
		if _, err := w.Write(streamed.GetBody()); err != nil {
			return nil // the client went away
		}
		if flusher != nil {
			flusher.Flush()
		}
		if streamed.GetEndOfStream() {
			return <-sent
		}
	}
}

func headerValue(header *corev3.HeaderValue) string {
	if header.GetRawValue() != nil {
		return string(header.GetRawValue())
	}
	return header.GetValue()
}

func compact(value any) string {
	out, _ := json.Marshal(value)
	return string(out)
}
