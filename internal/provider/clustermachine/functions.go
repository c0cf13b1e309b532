package clustermachine

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

// stringFunction is a provider function of string parameters with a string result.
type stringFunction struct {
	name, summary, description string
	params                     []stringParam
	run                        func(args []string) string
}

func (f stringFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = f.name
}

// stringParam is a string parameter: its name and description.
type stringParam struct{ name, description string }

func (f stringFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	params := make([]function.Parameter, len(f.params))
	for i, p := range f.params {
		params[i] = function.StringParameter{Name: p.name, MarkdownDescription: p.description}
	}
	resp.Definition = function.Definition{
		Summary:             f.summary,
		MarkdownDescription: f.description,
		Parameters:          params,
		Return:              function.StringReturn{},
	}
}

func (f stringFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	args := make([]string, len(f.params))
	targets := make([]any, len(args))
	for i := range args {
		targets[i] = &args[i]
	}
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, targets...))
	if resp.Error != nil {
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, f.run(args)))
}

var _ function.Function = stringFunction{}

// NewNameFunction is provider::libvirt::cluster_machine_name.
func NewNameFunction() function.Function {
	return stringFunction{
		name:    "cluster_machine_name",
		summary: "The libvirt domain name libvirt_cluster_machine gives a machine.",
		description: "Returns `<namespace>-<name>-<hash>`, where hash is the first 6 hex characters of " +
			"sha256(`<namespace>/<name>`): the exact domain name `libvirt_cluster_machine` uses. The result is always a " +
			"valid DNS label (lower case, at most 63 characters; the namespace-name part is truncated, never the hash).",
		params: []stringParam{{"namespace", "The Cluster API namespace of the machine."}, {"name", "The machine's name."}},
		run:    func(a []string) string { return capi.DomainName(a[0], a[1]) },
	}
}

// NewMACFromNameFunction is provider::libvirt::mac_from_name.
func NewMACFromNameFunction() function.Function {
	return stringFunction{
		name:    "mac_from_name",
		summary: "The MAC address libvirt_cluster_machine derives from a domain name.",
		description: "Returns `52:54:00:xx:yy:zz`, where xx:yy:zz are the first three bytes of sha256(`name`): the " +
			"MAC `libvirt_cluster_machine` gives the domain of that name. Always a locally administered unicast address. " +
			"Pass the domain name, e.g. `provider::libvirt::mac_from_name(provider::libvirt::cluster_machine_name(ns, name))`.",
		params: []stringParam{{"name", "The libvirt domain name."}},
		run:    func(a []string) string { return capi.MAC(a[0]) },
	}
}
