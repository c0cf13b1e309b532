package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

var _ function.Function = clusterMachineNameFunction{}

// NewClusterMachineNameFunction is provider::libvirt::cluster_machine_name.
func NewClusterMachineNameFunction() function.Function { return clusterMachineNameFunction{} }

type clusterMachineNameFunction struct{}

func (clusterMachineNameFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "cluster_machine_name"
}

func (clusterMachineNameFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The libvirt domain name libvirt_cluster_machine gives a machine.",
		MarkdownDescription: "Returns `<namespace>-<name>-<hash>`, where hash is the first 6 hex characters of " +
			"sha256(`<namespace>/<name>`): the exact domain name `libvirt_cluster_machine` uses. The result is always a " +
			"valid DNS label (lower case, at most 63 characters; the namespace-name part is truncated, never the hash).",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "namespace", MarkdownDescription: "The Cluster API namespace of the machine."},
			function.StringParameter{Name: "name", MarkdownDescription: "The machine's name."},
		},
		Return: function.StringReturn{},
	}
}

func (clusterMachineNameFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var namespace, name string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &namespace, &name))
	if resp.Error != nil {
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, capi.DomainName(namespace, name)))
}
