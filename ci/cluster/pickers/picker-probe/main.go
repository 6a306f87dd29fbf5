// picker-probe asks an endpoint picker what a gateway would ask it, and prints the answer as JSON:
//
//	picker-probe health ADDR SERVICE             {"status": "SERVING"}
//	picker-probe route ADDR BODY [KEY=VALUE...]   {"headers": {...}, "body": "..."} or {"immediate": {"status": 429, "body": "..."}}
//	picker-probe routes ADDR BODY [KEY=VALUE...]  the request again and again on one connection, "{n}" in
//	                                             BODY replaced by its number (0, 1, ...), one answer a line
//	                                             ({"error": "..."} for a failed one), until standard input
//	                                             is closed
//	picker-probe gateway ADDR LISTEN [SCHEME]    an HTTP gateway in front of the picker at ADDR (or the
//	                                             pickers listed in the file @FILE), on LISTEN (gateway.go),
//	                                             calling the pods in SCHEME (http, or https without
//	                                             verification); prints the address it listens on
//	picker-probe routes-gateway CONFIG LISTEN [SCHEME]
//	                                             the same in front of several InferencePools, routing as
//	                                             the HTTPRoutes in the JSON file CONFIG say (routes.go),
//	                                             after the body-based router it names if any (bbr.go):
//	                                             {"bbr": ADDR, "routes": [HTTPRoute...],
//	                                              "pools": {"NAMESPACE/NAME": ADDR or @FILE}}
//
// route sends one request's headers and JSON body over the ext-proc stream, as Envoy does, over TLS
// without verification (the picker serves a self-signed certificate by default). "headers" are the
// request headers the picker sets (the chosen endpoint among them), "body" the request body it
// forwards if it rewrote it.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	health "google.golang.org/grpc/health/grpc_health_v1"
)

func main() {
	if len(os.Args) < 4 {
		fail(fmt.Errorf("usage: picker-probe health ADDR SERVICE | route(s) ADDR BODY [KEY=VALUE...] | " +
			"gateway ADDR|@FILE LISTEN [SCHEME] | routes-gateway CONFIG LISTEN [SCHEME]"))
	}
	if serve, ok := gateways[os.Args[1]]; ok {
		scheme := "http"
		if len(os.Args) > 4 {
			scheme = os.Args[4]
		}
		if err := serve(os.Args[2], os.Args[3], scheme); err != nil {
			fail(err)
		}
		return
	}
	if os.Args[1] == "routes" {
		if err := routes(os.Args[2], os.Args[3], os.Args[4:]); err != nil {
			fail(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var answer any
	var err error
	switch os.Args[1] {
	case "health":
		answer, err = checkHealth(ctx, os.Args[2], os.Args[3])
	case "route":
		var conn *grpc.ClientConn
		if conn, err = dial(os.Args[2]); err == nil {
			defer conn.Close()
			answer, err = route(ctx, conn, os.Args[3], os.Args[4:])
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	out, _ := json.Marshal(answer)
	fmt.Println(string(out))
}

// gateways serve a gateway stand-in in front of what their first argument names, on LISTEN, calling the
// pods in SCHEME.
var gateways = map[string]func(pickersOrConfig, listen, scheme string) error{
	"gateway": serveGateway, "routes-gateway": serveRoutes}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "picker-probe:", err)
	os.Exit(1)
}

func checkHealth(ctx context.Context, addr, service string) (map[string]string, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	reply, err := health.NewHealthClient(conn).Check(ctx, &health.HealthCheckRequest{Service: service})
	if err != nil {
		return nil, err
	}
	return map[string]string{"status": reply.GetStatus().String()}, nil
}

func dial(addr string) (*grpc.ClientConn, error) {
	creds := credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test client
	return grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
}

// routes asks the same request on one connection until standard input closes, printing each answer as
// soon as it comes.
func routes(addr, body string, extra []string) error {
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(closed)
	}()
	out := json.NewEncoder(os.Stdout)
	for n := 0; ; n++ {
		select {
		case <-closed:
			return nil
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		answer, err := route(ctx, conn, strings.ReplaceAll(body, "{n}", strconv.Itoa(n)), extra)
		cancel()
		if err != nil {
			answer = map[string]any{"error": err.Error()}
		}
		if err := out.Encode(answer); err != nil {
			return err
		}
	}
}

func route(ctx context.Context, conn *grpc.ClientConn, body string, extra []string) (map[string]any, error) {
	stream, err := extproc.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		return nil, err
	}
	headers := []*corev3.HeaderValue{
		{Key: ":method", RawValue: []byte("POST")},
		{Key: ":path", RawValue: []byte("/v1/completions")},
		{Key: "content-type", RawValue: []byte("application/json")},
	}
	for _, pair := range extra {
		key, value, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("header %q is not KEY=VALUE", pair)
		}
		headers = append(headers, &corev3.HeaderValue{Key: key, RawValue: []byte(value)})
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestHeaders{
		RequestHeaders: &extproc.HttpHeaders{Headers: &corev3.HeaderMap{Headers: headers}}}}); err != nil {
		return nil, err
	}
	if err := stream.Send(&extproc.ProcessingRequest{Request: &extproc.ProcessingRequest_RequestBody{
		RequestBody: &extproc.HttpBody{Body: []byte(body), EndOfStream: true}}}); err != nil {
		return nil, err
	}
	reply, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	if immediate := reply.GetImmediateResponse(); immediate != nil {
		return map[string]any{"immediate": map[string]any{
			"status": int(immediate.GetStatus().GetCode()), "body": string(immediate.GetBody())}}, nil
	}
	answer := map[string]any{"headers": setHeaders(reply.GetRequestHeaders().GetResponse().GetHeaderMutation())}
	// The body follows, whole or streamed in chunks until end of stream; nil where the picker keeps it.
	forwarded, err := requestBody(stream, nil)
	if err != nil {
		return nil, err
	}
	_ = stream.CloseSend()
	if len(forwarded) > 0 {
		answer["body"] = string(forwarded)
	}
	return answer, nil
}
