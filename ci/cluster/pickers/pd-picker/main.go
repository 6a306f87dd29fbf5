// The prefill/decode endpoint picker of llm-d-inference-scheduler, built without cgo: the Gateway API
// Inference Extension runner with the scheduler's prefill/decode plugins (filters, the prefill header,
// the pd profile handler). Its scorers that need cgo (precise prefix cache, load aware, session
// affinity, active requests) are left out; the configurations FusionInfer renders use none of them.
package main

import (
	"os"

	"github.com/llm-d/llm-d-inference-scheduler/pkg/plugins/filter"
	prerequest "github.com/llm-d/llm-d-inference-scheduler/pkg/plugins/pre-request"
	"github.com/llm-d/llm-d-inference-scheduler/pkg/plugins/profile"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/gateway-api-inference-extension/cmd/epp/runner"
	"sigs.k8s.io/gateway-api-inference-extension/pkg/epp/plugins"
)

func main() {
	plugins.Register(filter.ByLabelType, filter.ByLabelFactory)
	plugins.Register(filter.ByLabelSelectorType, filter.ByLabelSelectorFactory)
	plugins.Register(filter.DecodeRoleType, filter.DecodeRoleFactory)
	plugins.Register(filter.PrefillRoleType, filter.PrefillRoleFactory)
	plugins.Register(prerequest.PrefillHeaderHandlerType, prerequest.PrefillHeaderHandlerFactory)
	plugins.Register(profile.PdProfileHandlerType, profile.PdProfileHandlerFactory)
	if err := runner.NewRunner().Run(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
