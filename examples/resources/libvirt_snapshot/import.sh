# <domain name or uuid>/<snapshot name>
terraform import libvirt_snapshot.before_upgrade web/before-upgrade
