package provider

import (
	"context"
	"io"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/kvmforge/terraform-provider-libvirt/internal/imagesource"
	"github.com/kvmforge/terraform-provider-libvirt/internal/libvirt"
)

// compressionReplace replaces the volume when source_compression changes, except between
// unset and "auto", which read the source the same way.
func compressionReplace() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(func(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
		auto := func(v types.String) bool { return v.IsNull() || v.ValueString() == imagesource.Auto }
		resp.RequiresReplace = !(auto(req.StateValue) && auto(req.PlanValue))
	}, "Changing source_compression (other than between unset and \"auto\") replaces the volume.",
		"Changing `source_compression` (other than between unset and `\"auto\"`) replaces the volume.")
}

// decoder reads an upload's source as source_compression (want) says (imagesource.Open).
func decoder(ctx context.Context, want string) libvirt.Decoder {
	return func(r io.Reader, name string) (io.Reader, bool, error) {
		img, kind, err := imagesource.Open(r, want, name)
		if err != nil {
			return nil, false, err
		}
		if kind != imagesource.None {
			tflog.Info(ctx, "decompressing "+name+" while it uploads", map[string]any{"source": name, "compression": kind})
		}
		return img, kind != imagesource.None, nil
	}
}
