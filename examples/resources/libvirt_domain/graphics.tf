# A VNC console on every address of the host, on a fixed port with a websocket for noVNC,
# a German keyboard, and a password kept out of the state: graphics_password_wo is
# write-only (Terraform >= 1.11, OpenTofu >= 1.11); bump graphics_password_wo_version to
# set a new one, which applies to the running domain live (no restart). console_url is
# vnc://<host>:5910.
variable "vnc_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

resource "libvirt_domain" "desktop" {
  name       = "desktop-1"
  vcpu       = 2
  memory_mib = 2048

  graphics = {
    type      = "vnc"
    listen    = "0.0.0.0"
    port      = 5910
    websocket = 5710
    keymap    = "de"
  }
  graphics_password_wo         = var.vnc_password
  graphics_password_wo_version = 1
}
