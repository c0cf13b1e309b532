package domain

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/kvmforge/terraform-provider-libvirt/internal/domainxml"
	"github.com/kvmforge/terraform-provider-libvirt/internal/provider/tfkit"
)

// device_xml: raw device fragments for what the schema does not model (domainxml/device_xml.go).

type domainDeviceXMLModel struct {
	DeviceXML types.List `tfsdk:"device_xml"`
}

var domainDeviceXML = family{
	attributes: map[string]schema.Attribute{
		"device_xml": schema.ListAttribute{
			MarkdownDescription: "Raw XML of devices this schema does not model (a `<shmem>`, an `<iommu>`, a `<redirdev>`, a " +
				"`<controller>` of a model of your choosing, a network interface of a type `network_interface` does not have: `user`, " +
				"`ethernet`, `vhostuser`, `mcast`, `udp`, `server`, `client`, `hostdev`, `vdpa`, ...): each item is exactly one element that belongs under `<devices>`. " +
				"Import writes here every device of the domain that no block can say (such NICs, disks the `disk` block cannot say exactly — " +
				"a floppy, an empty cdrom tray, a `volume`, `dir`, `nvme` or `vhostuser` source, a network protocol or option `network_source` " +
				"lacks (gluster, nbd over a unix socket, `<ssl>`, `<config>`, ...), `<reservations>`, `startupPolicy`, driver options, a drive " +
				"address libvirt would not give the target —, `<shmem>`, `<redirdev>`, `<smartcard>`, " +
				"`<hub>`, `<parallel>`, memory devices, `<iommu>`, ...), as libvirt printed it without its address, so an adopted domain keeps them. " +
				"What libvirt fills in (addresses, aliases, indexes, defaults) is no change, so an accepted fragment plans clean; " +
				"write values as libvirt stores them (`virsh dumpxml` shows how), or the apply fails naming the fragment. Devices " +
				"the schema has (disks the `disk` block says, network interfaces on a network, bridge or host link, hostdevs, filesystems, graphics, serials, consoles, channels, video, " +
				"rng, watchdog, panic, vsock, memballoon, sound, inputs) are refused: use their blocks; so is `<emulator>` (use " +
				"`emulator`), and a comment, processing instruction or DOCTYPE. Removing a fragment removes its device. " +
				"Any change restarts a running domain.",
			Optional:    true,
			ElementType: types.StringType,
			// No uniqueness: two identical devices are two devices (virt-install adds two
			// spicevmc USB redirections), and each fragment stands for one.
			Validators: []validator.List{listvalidator.SizeAtLeast(1)},
		},
	},
	toSpec: func(m *Model, s *domainxml.Spec) {
		s.DeviceXML = knownStrings(m.DeviceXML)
	},
	fromSpec: func(s domainxml.Spec, prior, m *Model) {
		m.DeviceXML = types.ListNull(types.StringType)
		if len(s.DeviceXML) > 0 {
			m.DeviceXML = tfkit.StringList(s.DeviceXML)
		}
	},
	validate: func(m *Model, diags *diag.Diagnostics) {
		for i, f := range knownStrings(m.DeviceXML) {
			if _, err := domainxml.ParseDeviceFragment(f); err != nil {
				diags.AddAttributeError(path.Root("device_xml").AtListIndex(i), "Invalid device_xml fragment",
					fmt.Sprintf("libvirt_domain %s, device_xml[%d] (%s): %v.", m.Name.ValueString(), i, shorten(f, 80), err))
			}
		}
	},
}

// presentFragments is device_xml as read: the prior state's fragments that the domain
// still holds, in their order (listed: those the record of the last apply lists and
// libvirt kept; an import's are in no record until the first apply, so they are looked
// for among the escaped devices), then listed fragments the prior did not have.
func presentFragments(prior, listed, escaped []string) []string {
	listedLeft := map[string]int{}
	for _, f := range listed {
		listedLeft[f]++
	}
	escaped = slices.Clone(escaped)
	var out []string
	for _, f := range prior {
		if listedLeft[f] > 0 {
			listedLeft[f]--
			out = append(out, f)
			continue
		}
		for j := range escaped { // one escaped device per fragment: duplicates count
			if domainxml.FragmentPresent(f, escaped[j:j+1]) {
				escaped = slices.Delete(escaped, j, j+1)
				out = append(out, f)
				break
			}
		}
	}
	for _, f := range listed {
		if listedLeft[f] > 0 {
			listedLeft[f]--
			out = append(out, f)
		}
	}
	return out
}

// checkFragmentsKept: after an apply, every fragment the plan has for attr (device_xml,
// extra_xml) must be found in what libvirt stored; one it rewrote (a unit, a default
// spelled out) would show as a change on every plan, so the apply fails naming it and
// keeps the plan's list (*got) in state. what says what a fragment is, for the message.
func checkFragmentsKept(attr, what, domain string, plan types.List, got *types.List) error {
	want, have := knownStrings(plan), knownStrings(*got)
	for i, f := range want {
		if !slices.Contains(have, f) {
			*got = plan
			return fmt.Errorf("%s[%d] (%s) was accepted, but libvirt stored the %s differently, so it would show as "+
				"changed on every plan: write it as `virsh dumpxml %s` shows it", attr, i, shorten(f, 100), what, domain)
		}
	}
	return nil
}

// knownStrings is a list of strings' known elements (none when it is null or unknown).
func knownStrings(l types.List) []string {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var out []string
	for _, v := range l.Elements() {
		if s, ok := v.(types.String); ok && tfkit.Known(s) {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// shorten is s cut to n runes with an ellipsis, for messages.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
