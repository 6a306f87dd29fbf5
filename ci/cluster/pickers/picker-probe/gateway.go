package main

// gateway is what an ext-proc gateway (Envoy, as GKE's, Istio's and kgateway's are) does with an
// endpoint picker, on one HTTP listener: each request's headers and body go to the picker; the request,
// with the headers the picker set and the body it forwards, goes to the endpoint it names
// (x-gateway-destination-endpoint); the response's headers and body go back through the picker (which
// counts what it sent where) to the client, streamed as they come. A request the picker answers itself
// (429, 503) gets that answer. The response carries the chosen endpoint and prefill host in
// x-stand-in-destination and x-stand-in-prefiller, for tests to see where each request went.
//
// The picker is one address, or "@FILE": a file of picker addresses, one a line, that whoever started
// the gateway rewrites as the pickers' pods come and go (what a gateway learns from the picker Service's
// ready endpoints). The gateway reads it again when it changes and sends each request to the next
// picker in turn, named in x-stand-in-picker; with none listed, or when that picker fails the request,
// the request fails (the InferencePool's failureMode FailClose): no retry elsewhere, as Envoy's ext-proc
// filter does not retry.

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

// serveGateway listens on LISTEN and serves until the process ends, calling the pods in SCHEME: "https" as
// a gateway's backend TLS does, the pods' certificate not verified (it names no address of the test's).
func serveGateway(picker, listen, scheme string) error {
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("scheme %q: http or https", scheme)
	}
	pickers := &pickers{conns: map[string]*grpc.ClientConn{}}
	if file, ok := strings.CutPrefix(picker, "@"); ok {
		pickers.file = file
	} else {
		pickers.addresses = []string{picker}
	}
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Println(listener.Addr().String()) // the address, for whoever started it
	transport := &http.Transport{MaxIdleConnsPerHost: 256, ResponseHeaderTimeout: requestTimeout,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the test pods' certificates
	server := &http.Server{Handler: &gateway{pickers: pickers, scheme: scheme,
		client: &http.Client{Transport: transport}},
		ReadHeaderTimeout: 10 * time.Second}
	return server.Serve(listener)
}

// pickers are the picker addresses the gateway sends requests to, in turn.
type pickers struct {
	mu        sync.Mutex
	file      string // "": the addresses are fixed
	read      time.Time
	size      int64
	addresses []string
	next      int
	conns     map[string]*grpc.ClientConn
}

// choose is the next picker and a connection to it, the file read again first if it changed.
func (p *pickers) choose() (string, *grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.file != "" {
		info, err := os.Stat(p.file)
		if err != nil {
			return "", nil, err
		}
		if !info.ModTime().Equal(p.read) || info.Size() != p.size {
			text, err := os.ReadFile(p.file)
			if err != nil {
				return "", nil, err
			}
			p.read, p.size, p.addresses = info.ModTime(), info.Size(), strings.Fields(string(text))
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

type gateway struct {
	pickers *pickers
	scheme  string
	client  *http.Client
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := g.serve(ctx, w, r); err != nil {
		log.Printf("%s %s: %v", r.Method, r.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

func (g *gateway) serve(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	picker, conn, err := g.pickers.choose()
	if err != nil {
		return err
	}
	w.Header().Set("x-stand-in-picker", picker)
	stream, err := extproc.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		return err
	}
	defer stream.CloseSend() //nolint:errcheck // the stream ends with the request
	headers := []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte(r.Method)}, {Key: ":path", RawValue: []byte(r.URL.RequestURI())},
		{Key: ":authority", RawValue: []byte(r.Host)}, {Key: ":scheme", RawValue: []byte("http")},
	}
	for name, values := range r.Header {
		headers = append(headers, &corev3.HeaderValue{Key: strings.ToLower(name), RawValue: []byte(strings.Join(values, ","))})
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: &corev3.HeaderMap{Headers: headers}}}}); err != nil {
		return err
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: body, EndOfStream: true}}}); err != nil {
		return err
	}
	reply, err := stream.Recv()
	if err != nil {
		return err
	}
	if immediate := reply.GetImmediateResponse(); immediate != nil {
		w.WriteHeader(int(immediate.GetStatus().GetCode()))
		_, _ = w.Write(immediate.GetBody())
		return nil
	}
	set := map[string]string{}
	for _, option := range reply.GetRequestHeaders().GetResponse().GetHeaderMutation().GetSetHeaders() {
		set[strings.ToLower(option.GetHeader().GetKey())] = headerValue(option.GetHeader())
	}
	forwarded, err := requestBody(stream, body)
	if err != nil {
		return err
	}
	destination := strings.TrimSpace(strings.Split(set[destinationHeader], ",")[0])
	if destination == "" {
		return errors.New("the picker named no endpoint")
	}
	upstream, err := http.NewRequestWithContext(ctx, r.Method, g.scheme+"://"+destination+r.URL.RequestURI(),
		bytes.NewReader(forwarded))
	if err != nil {
		return err
	}
	upstream.Header = r.Header.Clone()
	upstream.Header.Set("Content-Length", strconv.Itoa(len(forwarded)))
	upstream.ContentLength = int64(len(forwarded))
	for name, value := range set {
		if !strings.HasPrefix(name, ":") && name != "content-length" {
			upstream.Header.Set(name, value)
		}
	}
	response, err := g.client.Do(upstream)
	if err != nil {
		return fmt.Errorf("%s: %w", destination, err)
	}
	defer response.Body.Close()
	return respond(stream, w, response, destination, set[prefillHeader])
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
