package storage

import (
	"context"
	"io"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

// checkFileCompression reads the first bytes of source_file at plan time: a compression
// that does not match them (or a name that says another) is an error before anything is
// made.
func checkFileCompression(file, want string, d *diag.Diagnostics) {
	f, err := os.Open(file)
	if err != nil {
		return // the apply says why
	}
	defer f.Close()
	head := make([]byte, imagesource.SniffLen)
	n, _ := io.ReadFull(f, head)
	if _, err := imagesource.Resolve(want, file, head[:n]); err != nil {
		d.AddAttributeError(path.Root("source_compression"), "source_compression does not match source_file", err.Error())
	}
}
