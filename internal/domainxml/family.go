package domainxml

import "libvirt.org/go/libvirtxml"

// A family is one part of a domain the provider manages — a kind of device (disks,
// network interfaces, graphics, the guest-agent channel) or a platform part (sizing, OS
// and firmware, CPU, the Ignition fw_cfg entry). Each lives in a file of its own with
// its Spec type and these functions; Build, FromDomain, Validate, Classify and
// DeriveClone go through every family in families, so adding one is that file, its field in Spec and a
// line below (plus its block in the provider's schema and model: see docs/adr).
type family struct {
	name string
	// validate checks the family's part of a spec (defaults already filled in).
	validate func(s *Spec) error
	// build writes the family's part of s into d. d is a fresh definition (base is nil)
	// or a copy of the domain's current one: devices that stay the same device keep
	// their address and every setting the family does not manage.
	build func(d *libvirtxml.Domain, s *Spec, base *libvirtxml.Domain) error
	// parse reads the family's part of d into p, ignoring what libvirt fills in or
	// rewrites. rec is libvirt_domain's metadata record (the user's own references).
	parse func(d *libvirtxml.Domain, p *Parsed, rec *record)
	// same reports whether a and b want the same of this family: a change it does not
	// see needs no restart (sizing within the ceilings is Classify's own business).
	same func(a, b Spec) bool
	// live, when set, says how a change same sees reaches the running domain: the live
	// operations that make it, or (why not empty) why it needs a restart. cur is the
	// inactive definition, nil at plan time. Without it, any change restarts (live.go).
	live func(old, next Spec, cur *libvirtxml.Domain) (ops []LiveOp, why string)
	// derive is what a clone must not share with its source: the family rewrites its
	// part of d (a copy of the source's persistent definition) so that the clone and the
	// source can be defined and run side by side. nil: the family's part is copied as
	// is. DeriveClone (clone.go) runs the hooks in family order; a hook may fill in s
	// what it chose for a later one (the disk family the cloud-init seed's target, which
	// the record writes).
	derive func(d *libvirtxml.Domain, s *CloneSpec) error
	// untyped, when set, returns the devices of l this family owns but cannot say
	// exactly, in l's order (nil when none): import escapes them whole into device_xml
	// (device_xml_adopt.go), parse must not read them as the family's own, and build must
	// keep them where the definition has them (the fragment holds them). A fragment of an
	// element the family owns is accepted in device_xml only in such a form.
	untyped func(l *libvirtxml.DomainDeviceList) *libvirtxml.DomainDeviceList
	// inexact, when set, returns the devices of l in a form the family types that it
	// cannot say exactly (adopt_exact.go): an import escapes them into device_xml, and
	// parse skips them when adopting or when a device_xml fragment of the record claims
	// them; build keeps a device a fragment of the spec claims where it is.
	inexact func(l *libvirtxml.DomainDeviceList, rec *record) *libvirtxml.DomainDeviceList
}

// families in the order Build writes them: the OS part first (a machine change drops
// device addresses), the record of references last.
var families = []family{
	sizingFamily,
	ioThreadsFamily,
	osFamily,
	loaderFamily, // after osFamily: a hand-chosen loader replaces auto-selection
	archFamily,
	cpuFamily,
	pinningFamily,
	diskFamily,
	interfaceFamily,
	hostdevFamily,
	filesystemFamily,
	memoryBackingFamily,
	bootOSFamily,
	kernelFamily,
	graphicsFamily,
	guestDevicesFamily,
	tpmFamily,
	agentFamily,
	chardevFamily, // after agentFamily: it keeps the agent channel that family wrote
	ignitionFamily,
	smbiosFamily,
	describeFamily,
	lifecycleFamily,
	featuresFamily,
	secureBootFamily, // after features: secure boot turns smm on
	deviceXMLFamily,  // after every device family: it rebuilds the device list
	qemuCommandlineFamily,
	extraXMLFamily, // after pinningFamily: a <cputune> fragment keeps the pins
	recordFamily,
}
