package domainxml

import "testing"

// A running domain's live XML: the VNC port libvirt chose and a connected agent channel.
const liveXMLForTest = `<domain type='qemu' id='7'>
  <name>web</name>
  <uuid>6f1f0e55-8d3b-4c3f-9d8e-2f4f7b0c1a11</uuid>
  <memory unit='KiB'>262144</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc-q35-7.2'>hvm</type></os>
  <devices>
    <channel type='unix'>
      <source mode='bind' path='/run/libvirt/qemu/channel/7-web/org.qemu.guest_agent.0'/>
      <target type='virtio' name='org.qemu.guest_agent.0' state='connected'/>
    </channel>
    <graphics type='vnc' port='5901' autoport='yes' listen='0.0.0.0'>
      <listen type='address' address='0.0.0.0'/>
    </graphics>
  </devices>
</domain>`

// ParseLive reads the two values a refresh takes from the live XML as the full parse
// reads them.
func TestParseLive(t *testing.T) {
	full, err := Parse(liveXMLForTest)
	if err != nil {
		t.Fatal(err)
	}
	live, err := ParseLive(liveXMLForTest)
	if err != nil {
		t.Fatal(err)
	}
	if live.GraphicsPort != 5901 || full.GraphicsPort != live.GraphicsPort {
		t.Errorf("graphics port: live %d, full %d, want 5901", live.GraphicsPort, full.GraphicsPort)
	}
	if !live.AgentConnected || !full.AgentConnected {
		t.Errorf("agent connected: live %v, full %v, want true", live.AgentConnected, full.AgentConnected)
	}
	if live.Spec.Graphics != full.Spec.Graphics {
		t.Errorf("graphics: live %+v, full %+v", live.Spec.Graphics, full.Spec.Graphics)
	}
	if live.ID == nil || *live.ID != 7 {
		t.Errorf("id: %v, want 7", live.ID)
	}
	if _, err := ParseLive("<domain"); err == nil {
		t.Error("ParseLive accepted broken XML")
	}
}

func BenchmarkParseLive(b *testing.B) {
	for b.Loop() {
		if _, err := ParseLive(liveXMLForTest); err != nil {
			b.Fatal(err)
		}
	}
}
