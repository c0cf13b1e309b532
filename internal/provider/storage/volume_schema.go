package storage

import (
	"context"

	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/kvmforge/terraform-provider-libvirt/internal/imagesource"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit/validators"
)

func (r *VolumeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = tfkit.ResourceSchema(ctx, "A storage volume in a libvirt pool: empty, uploaded from a URL or a local file (streamed, "+
		"optionally checksummed), a copy-on-write overlay of another volume, or a full copy of one. "+
		"Growing `capacity_bytes` is done in place — online, through the running domain that uses the volume, "+
		"when there is one; shrinking is refused at plan time.", tfkit.AllTimeouts,
		storedVolumeAttributes("Volume name, unique in its pool, e.g. `web-1.qcow2`. Changing it replaces the volume.",
			"Name of the storage pool to create the volume in, e.g. `default`. Changing it replaces the volume.",
			"Path of the volume on the host (what a domain's disk uses).", map[string]schema.Attribute{
				"host": volumeHostAttribute(),
				"source_url": tfkit.SecretReplace("Image to upload: an `http://`, `https://` or `file://` URL. The image is streamed "+
					"from the machine running Terraform into libvirt, never held whole in memory; progress is logged. "+
					"What it brings is bounded: by `capacity_bytes` for a raw image whose length is not known before it is all "+
					"read, by what its own header allows for a qcow2 image (every cluster of its virtual size, its tables and "+
					"snapshots), and by the free space libvirt reports in a directory pool; past the bound the upload stops, "+
					"fails naming the bound, and the half-made volume is deleted. "+
					"At most one of `source_url`, `source_file`, `backing_volume`, `clone_from`. Changing it replaces the volume. "+
					"Sensitive: a URL may carry credentials (`https://user:password@host/...`) or a token in its query (a signed "+
					"URL), and Terraform can hide an attribute only whole, so `plan` shows `(sensitive value)` for every "+
					"`source_url`, and an output that uses it must be `sensitive = true`. The value is kept in state as written "+
					"(state must be protected anyway); logs and error messages show it with the user, password and query "+
					"replaced (`https://***@host/img.qcow2?REDACTED`).", validators.SourceURL()),
				"source_file": tfkit.OptionalReplace("Path of an image file on the machine running Terraform, uploaded like `source_url`. "+
					"Changing it replaces the volume.", stringvalidator.LengthAtLeast(1)),
				"backing_volume": tfkit.OptionalReplace("`id` of a volume to overlay copy-on-write (a linked qcow2 disk whose `<backingStore>` is "+
					"that volume), or `<pool>/<name>`. The overlay's capacity defaults to the backing volume's. Needs `format = \"qcow2\"`. "+
					"Changing it replaces the volume.", validators.VolumeRef()),
				"clone_from": tfkit.OptionalReplace("`id` of a volume to copy whole (or `<pool>/<name>`): libvirt converts it to `format` and "+
					"flattens its backing chain. The source is read as raw unless libvirt reads it as a qcow2 image whose header the "+
					"provider accepts (no external data file; a backing file only if it is a volume of a storage pool): a raw volume "+
					"on which a guest wrote a qcow2 header is copied byte for byte (with `format = \"raw\"`; another `format` is "+
					"refused, since libvirt's conversion would read the header). Changing it replaces the volume.", validators.VolumeRef()),
				"source_checksum": tfkit.OptionalReplace("Expected digest of `source_url` / `source_file`, as `sha256:<64 hex digits>`. Verified while "+
					"streaming; on a mismatch the apply fails and the volume is deleted.", validators.Checksum()),
				"source_compression": schema.StringAttribute{
					MarkdownDescription: "How `source_url` / `source_file` is compressed: `auto` (the default when unset: by the " +
						"magic bytes at its start, which must agree with a `.gz`, `.xz`, `.zst` or `.bz2` name), `none` (upload " +
						"the bytes as they are), `gzip`, `xz`, `zstd` or `bzip2`. The image is decompressed while it streams, never " +
						"stored whole. The decoder's memory is bounded: an xz stream may ask for a dictionary of at most 64 MiB " +
						"(what `xz -9` and `-9e` use), a zstd stream for a window of at most 128 MiB (`zstd --ultra -22`; a stream " +
						"made with `--long=31` asks 2 GiB and is refused, as `zstd -d` refuses it without `--long=31`); a larger " +
						"one fails before anything is allocated or made, naming the size asked. gzip and bzip2 need no bound. " +
						"`capacity_bytes` defaults to the image's own virtual size (qcow2 header, or the length of a " +
						"raw image once decompressed: on a pool that keeps volumes on devices, such as `logical`, a compressed raw " +
						"image needs `capacity_bytes`), and `source_checksum` is over the bytes as downloaded. Changing it (other " +
						"than between unset and `auto`) replaces the volume.",
					Optional:      true,
					PlanModifiers: []planmodifier.String{compressionReplace()},
					Validators:    []validator.String{stringvalidator.OneOf(imagesource.Names...)},
				},
				"permissions": volumePermissionsAttribute(),
				"format": schema.StringAttribute{
					MarkdownDescription: "Volume format: `qcow2` (default), `raw` or `iso`. An uploaded image must be of this " +
						"format (a qcow2 image needs `qcow2`; anything else `raw` or `iso`). Changing it replaces the volume. " +
						"The format is stored and never probed again: libvirt is told it everywhere the provider uses the volume " +
						"(its XML, the `<driver type>` of domain disks, the `<format>` of an overlay's backing store, exports and " +
						"copies), so a guest that writes a qcow2 header on its raw disk changes nothing (a refresh warns that libvirt " +
						"now reads it otherwise). An import (`<pool>/<name>` or the key), which has no configuration, takes the " +
						"format libvirt reports at that first read (`raw` when it names none) and keeps it from then on.",
					Optional:      true,
					Computed:      true,
					Default:       stringdefault.StaticString("qcow2"),
					PlanModifiers: tfkit.ReplaceString,
					Validators:    []validator.String{stringvalidator.OneOf("qcow2", "raw", "iso")},
				},
				"capacity_bytes": tfkit.DefaultedInt("Size the guest sees, in bytes (for qcow2, a multiple of 512). Required for an empty volume. With a source it defaults "+
					"to the image's own virtual size (read from its qcow2 header; for raw images their length, once decompressed: an image whose length is not known before it is all read — compressed, or served without a Content-Length — uploads into a directory pool's growing file, while a pool of fixed-size devices needs capacity_bytes, which then also bounds the image: one that decompresses past it fails and leaves no volume); a larger "+
					"value grows the volume. Growing it later is an in-place update (online through a running domain that "+
					"uses the volume, then a best-effort filesystem grow by the guest agent); shrinking is refused.", int64validator.AtLeast(1)),
				"allocation_bytes": allocationAttribute(),
				"encryption":       volumeEncryptionAttribute,
			}))
}
