package main

// The body-based router (GIE's bbr) is what lets HTTPRoutes route by the model a request names in its
// JSON body: it copies the model into a header (X-Gateway-Model-Name, and the base model's) before the
// gateway routes. Envoy calls it over ext-proc in FULL_DUPLEX_STREAMED mode, the mode bbr's --streaming
// serves: the request's headers (not ending the stream), then its body; bbr answers only once the body
// has ended, with the headers to set and remove and then the body again, streamed in chunks. A gateway
// skips response processing for it, so the response never goes to it.

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	extproc "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
)

// routeByBody sends the request to one of the body-based routers and returns the request with the
// headers it set and removed and the body it forwards, or what it answered itself (400 for a body that
// is not JSON). A request without a body (GET /v1/models) is sent as Envoy sends one: its headers alone,
// ending the stream, which bbr answers at once.
func routeByBody(ctx context.Context, routers *pickers, r *http.Request, body []byte) (*http.Request, []byte,
	*extproc.ImmediateResponse, error) {
	_, conn, err := routers.choose()
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := extproc.NewExternalProcessorClient(conn).Process(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	var reply *extproc.ProcessingResponse
	if len(body) == 0 {
		reply, err = exchangeHeaders(stream, r)
	} else {
		reply, err = exchange(stream, r, body)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if immediate := reply.GetImmediateResponse(); immediate != nil {
		return nil, nil, immediate, nil
	}
	headers := reply.GetRequestHeaders()
	if headers == nil {
		return nil, nil, nil, fmt.Errorf("it answered the request with %s, not its headers", compact(reply))
	}
	forwarded := body
	if len(body) != 0 {
		if forwarded, err = requestBody(stream, body); err != nil {
			return nil, nil, nil, err
		}
	}
	// bbr is done with the request: end the stream on the gateway's side and wait for bbr to end it on
	// its own, as it does then, rather than cancel it under bbr.
	_ = stream.CloseSend()
	for {
		if _, err := stream.Recv(); err != nil {
			break
		}
	}
	routed := r.Clone(r.Context())
	mutate(routed.Header, headers.GetResponse().GetHeaderMutation())
	return routed, forwarded, nil, nil
}

// mutate changes the headers as Envoy applies an ext-proc header mutation: the headers removed first,
// then those set, each replacing any value it had. Pseudo headers are left as they are.
func mutate(header http.Header, mutation *extproc.HeaderMutation) {
	for _, name := range mutation.GetRemoveHeaders() {
		header.Del(name)
	}
	for name, value := range setHeaders(mutation) {
		if !strings.HasPrefix(name, ":") {
			header.Set(name, value)
		}
	}
}
