package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// serveExtProc serves SERVER over TLS with a self-signed certificate on loopback, as the pickers and
// bbr do by default: its address.
func serveExtProc(t *testing.T, server extproc.ExternalProcessorServer) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	creds := credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	grpcServer := grpc.NewServer(grpc.Creds(creds))
	extproc.RegisterExternalProcessorServer(grpcServer, server)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go grpcServer.Serve(listener) //nolint:errcheck // ends with the test
	t.Cleanup(grpcServer.Stop)
	return listener.Addr().String()
}

// fakeRouter answers as GIE's bbr does with --streaming: nothing until the body has ended, then the
// model as X-Gateway-Model-Name (x-remove-me removed), and the body with "routed" added, in two chunks;
// a request without a body at once, with nothing changed.
type fakeRouter struct {
	extproc.UnimplementedExternalProcessorServer
	mu    sync.Mutex
	notes []string // what the router saw that it should not have, and how each stream ended
}

func (f *fakeRouter) note(note string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, note)
}

func (f *fakeRouter) Process(stream extproc.ExternalProcessor_ProcessServer) error {
	var body []byte
	for {
		request, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			f.note("ended")
			return nil
		}
		if err != nil {
			return err
		}
		if headers := request.GetRequestHeaders(); headers != nil {
			if headers.GetEndOfStream() { // a request without a body: answered at once, nothing changed
				f.note("bodiless")
				if err := stream.Send(&extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestHeaders{
					RequestHeaders: &extproc.HeadersResponse{}}}); err != nil {
					return err
				}
			}
			continue
		}
		if request.GetRequestBody() == nil {
			f.note("got " + compact(request))
			continue
		}
		body = append(body, request.GetRequestBody().GetBody()...)
		if !request.GetRequestBody().GetEndOfStream() {
			continue
		}
		if replies := f.route(body); replies != nil {
			for _, reply := range replies {
				if err := stream.Send(reply); err != nil {
					return err
				}
			}
			continue
		}
		return stream.Send(&extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ImmediateResponse{
			ImmediateResponse: &extproc.ImmediateResponse{Status: &typev3.HttpStatus{Code: typev3.StatusCode_BadRequest},
				Body: []byte("not JSON")}}})
	}
}

// route is the router's replies to the whole body, or nil if it is not JSON.
func (f *fakeRouter) route(body []byte) []*extproc.ProcessingResponse {
	var parsed map[string]any
	if json.Unmarshal(body, &parsed) != nil {
		return nil
	}
	parsed["routed"] = true
	routed, _ := json.Marshal(parsed)
	model, _ := parsed["model"].(string)
	set := []*corev3.HeaderValueOption{
		{Header: &corev3.HeaderValue{Key: "X-Gateway-Model-Name", RawValue: []byte(model)}},
		{Header: &corev3.HeaderValue{Key: "Content-Length", RawValue: []byte(strconv.Itoa(len(routed)))}},
	}
	replies := []*extproc.ProcessingResponse{{Response: &extproc.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extproc.HeadersResponse{Response: &extproc.CommonResponse{ClearRouteCache: true,
			HeaderMutation: &extproc.HeaderMutation{SetHeaders: set, RemoveHeaders: []string{"x-remove-me"}}}}}}}
	for i, chunk := range [][]byte{routed[:len(routed)/2], routed[len(routed)/2:]} {
		replies = append(replies, &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestBody{
			RequestBody: &extproc.BodyResponse{Response: &extproc.CommonResponse{BodyMutation: &extproc.BodyMutation{
				Mutation: &extproc.BodyMutation_StreamedResponse{StreamedResponse: &extproc.StreamedBodyResponse{
					Body: chunk, EndOfStream: i == 1}}}}}}})
	}
	return replies
}

// fakePicker sends every request to destination, keeps the body and passes the response through,
// noting the model header each request came with.
type fakePicker struct {
	extproc.UnimplementedExternalProcessorServer
	destination string
	mu          sync.Mutex
	models      []string
}

func (f *fakePicker) Process(stream extproc.ExternalProcessor_ProcessServer) error {
	for {
		request, err := stream.Recv()
		if err != nil {
			return nil //nolint:nilerr // the gateway ended the stream
		}
		var reply *extproc.ProcessingResponse
		switch {
		case request.GetRequestHeaders() != nil:
			f.mu.Lock()
			for _, header := range request.GetRequestHeaders().GetHeaders().GetHeaders() {
				if header.GetKey() == "x-gateway-model-name" {
					f.models = append(f.models, headerValue(header))
				}
			}
			f.mu.Unlock()
			continue
		case request.GetRequestBody() != nil:
			if err := stream.Send(&extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestHeaders{
				RequestHeaders: &extproc.HeadersResponse{Response: &extproc.CommonResponse{
					HeaderMutation: &extproc.HeaderMutation{SetHeaders: []*corev3.HeaderValueOption{{
						Header: &corev3.HeaderValue{Key: destinationHeader, RawValue: []byte(f.destination)}}}}}}}}); err != nil {
				return err
			}
			reply = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_RequestBody{
				RequestBody: &extproc.BodyResponse{}}}
		case request.GetResponseHeaders() != nil:
			reply = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseHeaders{
				ResponseHeaders: &extproc.HeadersResponse{}}}
		default:
			body := request.GetResponseBody()
			reply = &extproc.ProcessingResponse{Response: &extproc.ProcessingResponse_ResponseBody{
				ResponseBody: &extproc.BodyResponse{Response: &extproc.CommonResponse{BodyMutation: &extproc.BodyMutation{
					Mutation: &extproc.BodyMutation_StreamedResponse{StreamedResponse: &extproc.StreamedBodyResponse{
						Body: body.GetBody(), EndOfStream: body.GetEndOfStream()}}}}}}}
		}
		if err := stream.Send(reply); err != nil {
			return err
		}
	}
}

// TestRoutesGateway sends requests through the body-based router, the routes and a pool's picker to an
// engine that echoes what it got.
func TestRoutesGateway(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = json.NewEncoder(w).Encode(map[string]string{"model": r.Header.Get("X-Gateway-Model-Name"),
			"removed": r.Header.Get("X-Remove-Me"), "body": string(body), "length": r.Header.Get("Content-Length")})
	}))
	defer engine.Close()
	router := &fakeRouter{}
	picker := &fakePicker{destination: strings.TrimPrefix(engine.URL, "http://")}
	routerAddress, pickerAddress := serveExtProc(t, router), serveExtProc(t, picker)

	file := filepath.Join(t.TempDir(), "gateway.json")
	config := `{"bbr": "` + routerAddress + `", "pools": {"ns/pool": "` + pickerAddress + `"}, "routes": [` +
		routeJSON("served", old, rule("pool", `[{"path": {"type": "PathPrefix", "value": "/"},
			"headers": [{"type": "Exact", "name": "X-Gateway-Model-Name", "value": "m1"}]}]`)) + `]}`
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	upstream, err := newUpstream("http")
	if err != nil {
		t.Fatal(err)
	}
	gateway := httptest.NewServer(handler((&routesGateway{upstream: upstream, file: watchedFile{path: file},
		servers: map[string]*pickers{}}).serve))
	defer gateway.Close()
	ask := func(body string) (*http.Response, string) {
		request, _ := http.NewRequest("POST", gateway.URL+"/v1/completions", strings.NewReader(body))
		request.Header.Set("X-Remove-Me", "1")
		response, err := http.DefaultClient.Do(request)
		if err != nil {
			t.Fatal(err)
		}
		defer response.Body.Close()
		answer, _ := io.ReadAll(response.Body)
		return response, string(answer)
	}

	response, answer := ask(`{"model": "m1"}`)
	var echoed map[string]string
	if err := json.Unmarshal([]byte(answer), &echoed); err != nil || response.StatusCode != 200 {
		t.Fatalf("served model: %d %q", response.StatusCode, answer)
	}
	routed := `{"model":"m1","routed":true}`
	want := map[string]string{"model": "m1", "removed": "", "body": routed, "length": strconv.Itoa(len(routed))}
	for key, value := range want {
		if echoed[key] != value {
			t.Errorf("the engine got %s %q, want %q", key, echoed[key], value)
		}
	}
	for header, value := range map[string]string{"x-stand-in-route": "ns/served", "x-stand-in-pool": "ns/pool",
		"x-stand-in-picker": pickerAddress, "x-stand-in-destination": picker.destination} {
		if got := response.Header.Get(header); got != value {
			t.Errorf("%s: %q, want %q", header, got, value)
		}
	}
	if response, answer := ask(`{"model": "m2"}`); response.StatusCode != 404 ||
		answer != `{"error":{"message":"no route matches","code":404}}`+"\n" {
		t.Errorf("a model nobody serves: %d %q", response.StatusCode, answer)
	}
	if response, answer := ask(`not JSON`); response.StatusCode != 400 || answer != "not JSON" {
		t.Errorf("a body bbr cannot read: %d %q", response.StatusCode, answer)
	}
	// A request without a body (GET /v1/models) goes to the router as its headers alone, and on unchanged.
	listed, err := http.Get(gateway.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	listed.Body.Close()
	if listed.StatusCode != 404 || listed.Header.Get("x-stand-in-route") != "" {
		t.Errorf("a request without a body: %d %v", listed.StatusCode, listed.Header)
	}
	picker.mu.Lock()
	if strings.Join(picker.models, " ") != "m1" {
		t.Errorf("the picker saw models %v, want [m1]", picker.models)
	}
	picker.mu.Unlock()
	router.mu.Lock()
	if strings.Join(router.notes, " ") != "ended ended bodiless ended" {
		t.Errorf("the router noted %v, want each of the three routed streams ended from the gateway's side, "+
			"the last one's headers ending its request", router.notes)
	}
	router.mu.Unlock()
}
