package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/kvmforge/terraform-provider-libvirt/internal/capi"
)

var _ function.Function = macFromNameFunction{}

// NewMACFromNameFunction is provider::libvirt::mac_from_name.
func NewMACFromNameFunction() function.Function { return macFromNameFunction{} }

type macFromNameFunction struct{}

func (macFromNameFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "mac_from_name"
}

func (macFromNameFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The MAC address libvirt_cluster_machine derives from a domain name.",
		MarkdownDescription: "Returns `52:54:00:xx:yy:zz`, where xx:yy:zz are the first three bytes of sha256(`name`): the " +
			"MAC `libvirt_cluster_machine` gives the domain of that name. Always a locally administered unicast address. " +
			"Pass the domain name, e.g. `provider::libvirt::mac_from_name(provider::libvirt::cluster_machine_name(ns, name))`.",
		Parameters: []function.Parameter{
			function.StringParameter{Name: "name", MarkdownDescription: "The libvirt domain name."},
		},
		Return: function.StringReturn{},
	}
}

func (macFromNameFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var name string
	resp.Error = function.ConcatFuncErrors(req.Arguments.Get(ctx, &name))
	if resp.Error != nil {
		return
	}
	resp.Error = function.ConcatFuncErrors(resp.Result.Set(ctx, capi.MAC(name)))
}
