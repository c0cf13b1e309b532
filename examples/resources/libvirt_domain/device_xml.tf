# device_xml: devices this schema does not model, as libvirt XML. Here a shared-memory
# device two VMs on the host can map (ivshmem) and a USB hub. libvirt adds addresses and
# aliases; they are no change, so the next plan is empty.
resource "libvirt_domain" "shm_peer" {
  name       = "shm-peer-1"
  vcpu       = 1
  memory_mib = 512

  device_xml = [
    <<-XML
    <shmem name="peers">
      <model type="ivshmem-plain"/>
      <size unit="M">4</size>
    </shmem>
    XML
    ,
    "<hub type=\"usb\"/>",
  ]
}
