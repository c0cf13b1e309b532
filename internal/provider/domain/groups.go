package domain

import (
	"context"
	"maps"
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The v3 groups of libvirt_domain (ADR 9): the long tail of the schema in single nested
// attributes named after libvirt's elements, each null unless the configuration writes
// it. A group's model embeds the models of the families that feed it (a family names
// its group in family.group); the families' hooks reach their part through the
// group's pointer, which the engine (withGroups) makes non-nil for them.
const (
	groupOS      = "os"
	groupCPU     = "cpu"
	groupEvents  = "events"
	groupDevices = "devices"
	groupQEMU    = "qemu"
)

// domainGroups in schema order, with what each group's own description says.
var domainGroups = []struct{ name, description string }{
	{groupOS, "The guest's platform as libvirt's `<os>` describes it: architecture, machine type, emulator, boot order and " +
		"menu, direct kernel boot, Secure Boot, firmware chosen by hand, SMBIOS and fw_cfg. Null (the default): the host's " +
		"architecture and libvirt's defaults for it, and what the domain has is kept."},
	{groupCPU, "The guest's CPU (`<cpu>`, `<cputune>`, `<iothreads>`): mode and model, features, topology, NUMA cells, " +
		"pinning and I/O threads. Null (the default): libvirt's CPU for the domain type, and what the domain has is kept."},
	{groupEvents, "What libvirt does on the guest's lifecycle events (`<on_poweroff>`, `<on_reboot>`, `<on_crash>`). " +
		"Null (the default): what the domain has (libvirt writes `destroy`, `restart`, `destroy` for a domain made here)."},
	{groupDevices, "The rarer devices (`<devices>`): video, sound, input, serial, console, channel, watchdog, rng, tpm, " +
		"panic, vsock and memballoon. Null (the default): the domain made here has a pty serial port and console, the " +
		"devices libvirt adds by itself (a video card with graphics, a memory balloon, ps2 input on x86), and nothing else."},
	{groupQEMU, "QEMU command-line passthrough (`<qemu:commandline>`) for what libvirt cannot express. Null (the default): none."},
}

// domainOSGroup is libvirt_domain.os.
type domainOSGroup struct {
	domainMachineModel
	domainArchModel
	domainBootModel
	domainKernelModel
	domainSMBIOSModel
	domainSecureBootModel
	domainLoaderModel
}

// domainCPUGroup is libvirt_domain.cpu.
type domainCPUGroup struct {
	domainCPUModeModel
	domainCPUModel
	domainIOThreadsModel
}

// domainEventsGroup is libvirt_domain.events.
type domainEventsGroup struct {
	domainEventsModel
}

// domainDevicesGroup is libvirt_domain.devices.
type domainDevicesGroup struct {
	domainGuestDevicesModel
	domainChardevModel
	domainTPMModel
}

// domainQEMUGroup is libvirt_domain.qemu.
type domainQEMUGroup struct {
	domainQEMUModel
}

// groupsModel holds libvirt_domain's groups; Model embeds it.
type groupsModel struct {
	OS      *domainOSGroup      `tfsdk:"os"`
	CPU     *domainCPUGroup     `tfsdk:"cpu"`
	Events  *domainEventsGroup  `tfsdk:"events"`
	Devices *domainDevicesGroup `tfsdk:"devices"`
	QEMU    *domainQEMUGroup    `tfsdk:"qemu"`
}

// withGroups is m with every nil group replaced by an empty one (every value in it
// null), so that the families' hooks can read and write their part without asking
// whether the group was written. m itself is not changed.
func withGroups(m *Model) *Model {
	w := *m
	if w.OS == nil {
		w.OS = &domainOSGroup{}
	}
	if w.CPU == nil {
		w.CPU = &domainCPUGroup{}
	}
	if w.Events == nil {
		w.Events = &domainEventsGroup{}
	}
	if w.Devices == nil {
		w.Devices = &domainDevicesGroup{}
	}
	if w.QEMU == nil {
		w.QEMU = &domainQEMUGroup{}
	}
	return &w
}

// keepNullGroups sets to null every group of m that orig (what m was before withGroups)
// left null.
func keepNullGroups(m *Model, orig groupsModel) {
	if orig.OS == nil {
		m.OS = nil
	}
	if orig.CPU == nil {
		m.CPU = nil
	}
	if orig.Events == nil {
		m.Events = nil
	}
	if orig.Devices == nil {
		m.Devices = nil
	}
	if orig.QEMU == nil {
		m.QEMU = nil
	}
}

// isImport is true when prior is an import's: nothing but the id is known. A family's
// fromSpec then writes a grouped value only where the domain differs from what the
// provider would create without it.
func isImport(prior *Model) bool { return prior.Name.IsNull() }

// settleGroups decides, after the families have filled m from libvirt, which groups
// state holds: a group the prior model (state, plan) left null stays null, one it wrote
// stays written; on import (no prior) a group is written only when some value in it is,
// that is, where the domain differs from what the provider would create without it.
// Every value of a kept group is made storable (typed nulls: settleNulls).
func settleGroups(m, prior *Model, importing bool) {
	keep := func(g, p any) bool {
		if importing {
			return !allNull(reflect.ValueOf(g).Elem())
		}
		return !reflect.ValueOf(p).IsNil()
	}
	if !keep(m.OS, prior.OS) {
		m.OS = nil
	}
	if !keep(m.CPU, prior.CPU) {
		m.CPU = nil
	}
	if !keep(m.Events, prior.Events) {
		m.Events = nil
	}
	if !keep(m.Devices, prior.Devices) {
		m.Devices = nil
	}
	// qemu's null means "no command line", not "keep the domain's": one added outside
	// Terraform shows as drift (the next apply removes it), as an import would show it.
	if !keep(m.QEMU, prior.QEMU) && allNull(reflect.ValueOf(m.QEMU).Elem()) {
		m.QEMU = nil
	}
	types := groupAttrTypes()
	for name, g := range map[string]any{groupOS: m.OS, groupCPU: m.CPU, groupEvents: m.Events, groupDevices: m.Devices, groupQEMU: m.QEMU} {
		if v := reflect.ValueOf(g); !v.IsNil() {
			settleNulls(v.Elem(), types[name])
		}
	}
}

// allNull is true when every value in the struct v (embedded structs walked, nested
// models and slices counting as values) is null or absent.
func allNull(v reflect.Value) bool {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch {
		case sf.Anonymous:
			if !allNull(f) {
				return false
			}
		case f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice:
			if !f.IsNil() {
				return false
			}
		default:
			if a, ok := f.Interface().(attr.Value); ok && !a.IsNull() {
				return false
			}
		}
	}
	return true
}

// settleNulls replaces every zero-valued collection or object in the struct v (one a
// family left untouched: it has no element type, which the framework cannot store) by
// the typed null of its attribute in types.
func settleNulls(v reflect.Value, types map[string]attr.Type) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if sf.Anonymous {
			settleNulls(f, types)
			continue
		}
		a, ok := f.Interface().(attr.Value)
		if !ok || !a.IsNull() {
			continue
		}
		t, ok := types[sf.Tag.Get("tfsdk")]
		if !ok {
			continue
		}
		ctx := context.Background()
		if null, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nil)); err == nil && reflect.TypeOf(null) == f.Type() {
			f.Set(reflect.ValueOf(null))
		}
	}
}

// domainGroupAttributes builds each group's single nested attribute from the attributes
// its families declare.
func domainGroupAttributes() map[string]schema.Attribute {
	byGroup := map[string]map[string]schema.Attribute{}
	for _, f := range families {
		if f.group == "" {
			continue
		}
		if byGroup[f.group] == nil {
			byGroup[f.group] = map[string]schema.Attribute{}
		}
		maps.Copy(byGroup[f.group], f.attributes)
		for name, b := range f.blocks {
			byGroup[f.group][name] = blockAsAttribute(b)
		}
	}
	out := make(map[string]schema.Attribute, len(domainGroups))
	for _, g := range domainGroups {
		out[g.name] = schema.SingleNestedAttribute{MarkdownDescription: g.description, Optional: true, Attributes: byGroup[g.name]}
	}
	return out
}

// groupAttrTypes maps each group to its attributes' types.
var groupAttrTypes = sync.OnceValue(func() map[string]map[string]attr.Type {
	out := map[string]map[string]attr.Type{}
	for name, a := range domainGroupAttributes() {
		if o, ok := a.GetType().(basetypes.ObjectType); ok {
			out[name] = o.AttrTypes
		}
	}
	return out
})

// blockAsAttribute is a family's list or set block as the nested attribute a group can
// hold (groups are attributes, and attributes hold no blocks).
func blockAsAttribute(b schema.Block) schema.Attribute {
	switch b := b.(type) {
	case schema.ListNestedBlock:
		return schema.ListNestedAttribute{MarkdownDescription: b.MarkdownDescription, Optional: true, Validators: b.Validators,
			NestedObject: schema.NestedAttributeObject{Attributes: b.NestedObject.Attributes, Validators: b.NestedObject.Validators}}
	case schema.SetNestedBlock:
		return schema.SetNestedAttribute{MarkdownDescription: b.MarkdownDescription, Optional: true, Validators: b.Validators,
			NestedObject: schema.NestedAttributeObject{Attributes: b.NestedObject.Attributes, Validators: b.NestedObject.Validators}}
	}
	panic("libvirt_domain: a group holds list and set blocks only")
}
