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

# qemu.args / qemu.env: straight to QEMU, for what libvirt cannot express (libvirt marks
# the domain tainted). Here a fw_cfg blob the guest reads from
# /sys/firmware/qemu_fw_cfg/by_name/opt/com.example/role/raw.
resource "libvirt_domain" "tagged" {
  name       = "tagged-1"
  vcpu       = 1
  memory_mib = 512

  qemu = {
    args = ["-fw_cfg", "name=opt/com.example/role,string=worker"]
    env  = { QEMU_AUDIO_DRV = "none" }
  }
}
