package domainxml

import (
	"slices"
	"strings"
	"testing"

	"libvirt.org/go/libvirtxml"
)

// TestExtraXMLValidate: one top-level element libvirt knows and no family owns is
// accepted; an owned one is refused naming the attribute to use, and so are pins in a
// <cputune>, unknown elements, anything but one element, and a second of a single element.
func TestExtraXMLValidate(t *testing.T) {
	for frag, want := range map[string]string{
		`<os><type>hvm</type></os>`:                                   "managed by os",
		`<cpu mode="host-passthrough"/>`:                              "managed by cpu",
		`<memory unit="KiB">1024</memory>`:                            "managed by memory_mib",
		`<currentMemory unit="KiB">1024</currentMemory>`:              "managed by memory_mib",
		`<vcpu>2</vcpu>`:                                              "managed by vcpu",
		`<features><acpi/></features>`:                                "managed by features",
		`<on_reboot>destroy</on_reboot>`:                              "managed by events.on_reboot",
		`<memoryBacking><hugepages/></memoryBacking>`:                 "managed by memory_backing",
		`<iothreads>2</iothreads>`:                                    "managed by cpu.iothreads",
		`<sysinfo type="smbios"/>`:                                    "managed by os.smbios",
		`<devices><shmem name="a"/></devices>`:                        "device_xml",
		`<metadata/>`:                                                 "empty <metadata>",
		`<name>x</name>`:                                              "managed by name",
		`<description>x</description>`:                                "managed by description",
		`<cputune><vcpupin vcpu="0" cpuset="1"/></cputune>`:           "managed by cpu.pinning",
		`<cputune><emulatorpin cpuset="1"/></cputune>`:                "managed by cpu.emulator_pinning",
		`<memtune/>`:                                                  "an empty <memtune>",
		`<cputune></cputune>`:                                         "an empty <cputune>",
		`<nosuchelement/>`:                                            "not an element of libvirt's domain format",
		`<clock offset="utc" bogus="1"/>`:                             "does not know",
		`<memtune><nonsense/></memtune>`:                              "does not know",
		`<clock offset="utc"/><memtune/>`:                             "more than one element",
		`just text`:                                                   "not one XML element",
		`<!-- c --><clock offset="utc"/>`:                             "a comment",
		`<qemu:commandline><qemu:arg value="-x"/></qemu:commandline>`: "managed by qemu",
	} {
		_, err := ParseExtraFragment(frag)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", frag, err, want)
		}
	}
	for _, frag := range []string{
		clockTimers, memtune, blkiotune, `<seclabel type='none'/>`, perf, keywrap, `<cputune><shares>2048</shares></cputune>`,
		`<resource><partition>/machine</partition></resource>`, `<pm><suspend-to-mem enabled='no'/></pm>`, `<genid/>`,
		`<idmap><uid start='0' target='1000' count='10'/><gid start='0' target='1000' count='10'/></idmap>`,
		`<maxMemory slots='16' unit='KiB'>4194304</maxMemory>`,
	} {
		if _, err := ParseExtraFragment(frag); err != nil {
			t.Errorf("%s: %v", frag, err)
		}
	}
	errs := CheckExtraXML([]string{clockTimers, `<seclabel type='none'/>`, `<clock offset='localtime'/>`, `<seclabel type='dynamic' model='selinux'/>`})
	if errs[0] != nil || errs[1] != nil || errs[3] != nil || errs[2] == nil || !strings.Contains(errs[2].Error(), "a second <clock> (extra_xml[0]") {
		t.Errorf("CheckExtraXML: %v", errs)
	}
}

const (
	clockTimers = `<clock offset='utc'><timer name='rtc' tickpolicy='catchup'/><timer name='pit' tickpolicy='delay'/><timer name='hpet' present='no'/></clock>`
	memtune     = `<memtune><hard_limit unit='KiB'>1048576</hard_limit><soft_limit unit='KiB'>524288</soft_limit></memtune>`
	blkiotune   = `<blkiotune><weight>500</weight></blkiotune>`
	perf        = `<perf><event name='cmt' enabled='no'/></perf>`
	keywrap     = `<keywrap><cipher name='aes' state='off'/></keywrap>`
)

func extraBase() Spec {
	return Spec{Name: "d", VCPU: 2, MemoryKiB: 65536, Type: "qemu", Graphics: Graphics{Type: GraphicsNone}}
}

// libvirtRoundTrip is d as libvirt would give it back: through its text, with
// <seclabel type='none'> given model='none' as libvirt does.
func libvirtRoundTrip(t *testing.T, d *libvirtxml.Domain) string {
	t.Helper()
	text, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(text, `<seclabel type="none">`, `<seclabel type="none" model="none">`, 1)
}

// TestExtraXMLRoundTrip: fragments are built into the definition (a <cputune> fragment
// merged with the typed pins), read back as present, replaced, and removed again; an
// element written elsewhere stays.
func TestExtraXMLRoundTrip(t *testing.T) {
	cputune := `<cputune><shares>2048</shares><period>100000</period><quota>-1</quota></cputune>`
	s := extraBase()
	s.CPUPinning, s.EmulatorPinning = map[uint]string{0: "0", 1: "1"}, "0"
	s.ExtraXML = []string{clockTimers, memtune, blkiotune, `<seclabel type='none'/>`, perf, keywrap, cputune}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Clock == nil || len(d.Clock.Timer) != 3 || d.MemoryTune == nil || d.BlockIOTune == nil || len(d.SecLabel) != 1 ||
		d.Perf == nil || d.KeyWrap == nil {
		t.Fatalf("built: %+v", d)
	}
	if tune := d.CPUTune; tune == nil || tune.Shares == nil || tune.Shares.Value != 2048 || len(tune.VCPUPin) != 2 || tune.EmulatorPin == nil {
		t.Fatalf("cputune not merged with the pins: %+v", d.CPUTune)
	}
	text := libvirtRoundTrip(t, d)
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range s.ExtraXML {
		if !ExtraXMLPresent(p.Spec.ExtraXML, f) {
			t.Errorf("%s not read back from %q", f, p.Spec.ExtraXML)
		}
	}
	if len(p.Spec.CPUPinning) != 2 || p.Spec.EmulatorPinning != "0" {
		t.Errorf("pins read back: %v %q", p.Spec.CPUPinning, p.Spec.EmulatorPinning)
	}
	if ExtraXMLPresent(p.Spec.ExtraXML, `<clock offset='localtime'/>`) {
		t.Error("a clock the definition does not have read back as present")
	}
	if PlanChange(extraBase(), s, true, true, nil).Change != ChangeRestart {
		t.Error("an extra_xml change should restart a running domain")
	}
	requoted := s
	requoted.ExtraXML = slices.Clone(s.ExtraXML)
	requoted.ExtraXML[0] = strings.ReplaceAll(strings.ReplaceAll(clockTimers, "'", `"`), "/>", " />")
	if c := PlanChange(s, requoted, true, true, nil).Change; c == ChangeRestart {
		t.Errorf("a fragment written with other quotes: %v, want no restart", c)
	}

	// Next apply: the clock changes, memtune and cputune go; a <pm> written elsewhere stays.
	var cur libvirtxml.Domain
	if err := cur.Unmarshal(text); err != nil {
		t.Fatal(err)
	}
	cur.PM = &libvirtxml.DomainPM{SuspendToMem: &libvirtxml.DomainPMPolicy{Enabled: "no"}}
	next := extraBase()
	next.CPUPinning = s.CPUPinning
	next.ExtraXML = []string{`<clock offset='localtime'/>`, blkiotune, `<seclabel type='none'/>`, perf, keywrap}
	d2, err := Build(&cur, next)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Clock == nil || d2.Clock.Offset != "localtime" || len(d2.Clock.Timer) != 0 || d2.MemoryTune != nil || d2.PM == nil ||
		len(d2.SecLabel) != 1 {
		t.Errorf("after the change: clock %+v memtune %+v pm %+v seclabels %d", d2.Clock, d2.MemoryTune, d2.PM, len(d2.SecLabel))
	}
	if tune := d2.CPUTune; tune == nil || tune.Shares != nil || tune.Period != nil || len(tune.VCPUPin) != 2 || tune.EmulatorPin != nil {
		t.Errorf("cputune after its fragment went: %+v", d2.CPUTune)
	}
	if got := readRecord(d2).ExtraXML; !slices.Equal(got, next.ExtraXML) {
		t.Errorf("record %q", got)
	}

	// All gone: what the fragments wrote goes, the pm stays.
	d3, err := Build(d2, extraBase())
	if err != nil {
		t.Fatal(err)
	}
	if d3.Clock != nil || d3.BlockIOTune != nil || len(d3.SecLabel) != 0 || d3.Perf != nil || d3.KeyWrap != nil || d3.PM == nil || d3.CPUTune != nil {
		t.Errorf("after removing every fragment: %+v", d3)
	}
}

// TestExtraXMLWas: an imported domain has no record; the fragments the state had
// (ExtraXMLWas) say what the configuration took away.
func TestExtraXMLWas(t *testing.T) {
	var cur libvirtxml.Domain
	if err := cur.Unmarshal(handMade); err != nil {
		t.Fatal(err)
	}
	s := extraBase()
	s.ExtraXMLWas = []string{memtune, `<seclabel type='none' model='none'/>`}
	d, err := Build(&cur, s)
	if err != nil {
		t.Fatal(err)
	}
	if d.MemoryTune != nil || len(d.SecLabel) != 0 || d.Clock == nil || d.Perf == nil {
		t.Errorf("memtune %+v seclabels %+v clock %+v perf %+v", d.MemoryTune, d.SecLabel, d.Clock, d.Perf)
	}
}

// handMade is a definition as `virsh dumpxml --inactive` prints it for a domain defined by
// hand with elements the schema does not model.
const handMade = `<domain type='qemu'>
  <name>hand</name>
  <uuid>4e199e14-ca0f-45a0-b090-8adc0be04442</uuid>
  <genid>6b2221c2-d873-4107-a569-f58957816ea4</genid>
  <memory unit='KiB'>65536</memory>
  <currentMemory unit='KiB'>65536</currentMemory>
  <blkiotune>
    <weight>500</weight>
  </blkiotune>
  <memtune>
    <hard_limit unit='KiB'>1048576</hard_limit>
    <soft_limit unit='KiB'>524288</soft_limit>
  </memtune>
  <vcpu placement='static'>2</vcpu>
  <cputune>
    <shares>2048</shares>
    <vcpupin vcpu='0' cpuset='0'/>
  </cputune>
  <resource>
    <partition>/machine</partition>
  </resource>
  <os>
    <type arch='x86_64' machine='pc-i440fx-7.2'>hvm</type>
    <boot dev='hd'/>
  </os>
  <cpu mode='custom' match='exact' check='none'>
    <model fallback='forbid'>qemu64</model>
  </cpu>
  <clock offset='utc'>
    <timer name='rtc' tickpolicy='catchup'/>
    <timer name='pit' tickpolicy='delay'/>
    <timer name='hpet' present='no'/>
  </clock>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <pm>
    <suspend-to-mem enabled='no'/>
    <suspend-to-disk enabled='no'/>
  </pm>
  <perf>
    <event name='cmt' enabled='no'/>
  </perf>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='pci' index='0' model='pci-root'/>
    <memballoon model='virtio'/>
  </devices>
  <seclabel type='none' model='none'/>
  <keywrap>
    <cipher name='aes' state='off'/>
  </keywrap>
</domain>`

// TestImportExtraXML: a definition the provider made (libvirt's <clock offset='utc'/>
// added) imports with no fragment; a hand-made one with one per unmodelled element,
// printed as libvirt prints it, libvirt's default <resource> left out.
func TestImportExtraXML(t *testing.T) {
	d, err := Build(nil, extraBase())
	if err != nil {
		t.Fatal(err)
	}
	d.Clock = &libvirtxml.DomainClock{Offset: "utc"} // what libvirt adds on define
	text, _ := d.Marshal()
	p, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := ImportExtraXML(p.Spec.ExtraXML, p.Spec.ExtraXMLWas); len(got) != 0 {
		t.Errorf("a plain domain imports extra_xml %q", got)
	}

	p, err = Parse(handMade)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`<genid>6b2221c2-d873-4107-a569-f58957816ea4</genid>`,
		`<blkiotune><weight>500</weight></blkiotune>`,
		memtune,
		`<cputune><shares>2048</shares></cputune>`,
		clockTimers,
		`<pm><suspend-to-mem enabled='no'/><suspend-to-disk enabled='no'/></pm>`,
		perf,
		`<seclabel type='none' model='none'/>`,
		keywrap,
	}
	got := ImportExtraXML(p.Spec.ExtraXML, p.Spec.ExtraXMLWas)
	if !slices.Equal(got, want) {
		t.Errorf("import:\n got %q\nwant %q", got, want)
	}
	if errs := CheckExtraXML(got); slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Errorf("the imported fragments do not validate: %v", errs)
	}
	// Rebuilt from nothing with what the import wrote (and the typed pin), the definition
	// has every element again.
	s := extraBase()
	s.CPUPinning, s.ExtraXML = map[uint]string{0: "0"}, got
	d2, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Parse(libvirtRoundTrip(t, d2))
	if err != nil {
		t.Fatal(err)
	}
	if again := ImportExtraXML(p2.Spec.ExtraXML, nil); !slices.Equal(again, want) {
		t.Errorf("recreated:\n got %q\nwant %q", again, want)
	}
}

// TestImportExtraXMLRecorded: a domain made here imports its fragments as the
// configuration wrote them and in its order (the record's), then what was added
// elsewhere; a recorded fragment the definition lost is not imported.
func TestImportExtraXMLRecorded(t *testing.T) {
	s := extraBase()
	s.ExtraXML = []string{perf, `<clock offset="utc"><timer name="rtc" tickpolicy="catchup"/></clock>`, `<seclabel type='none'/>`}
	d, err := Build(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	d.PM = &libvirtxml.DomainPM{SuspendToDisk: &libvirtxml.DomainPMPolicy{Enabled: "no"}} // virsh edit
	d.Perf = nil                                                                          // and this taken away
	p, err := Parse(libvirtRoundTrip(t, d))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{s.ExtraXML[1], s.ExtraXML[2], `<pm><suspend-to-disk enabled='no'/></pm>`}
	if got := ImportExtraXML(p.Spec.ExtraXML, p.Spec.ExtraXMLWas); !slices.Equal(got, want) {
		t.Errorf("import:\n got %q\nwant %q", got, want)
	}
}
