# <network>/<mac>
terraform import libvirt_dhcp_reservation.web default/52:54:00:6c:3c:01
