output "names" {
  description = "Machine names (the guests' hostnames), in index order."
  value       = local.names
}

output "domain_names" {
  description = "libvirt domain names (<namespace>-<name>-<hash>), in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].domain_name]
}

output "ips" {
  description = "The address reserved for each machine, in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].ip]
}

output "provider_ids" {
  description = "Cluster API provider ids (libvirt://<uid>), in index order."
  value       = [for n in local.names : libvirt_cluster_machine.this[n].provider_id]
}

output "machines" {
  description = "Every machine by name: domain name, uid, MAC and reserved IP."
  value = {
    for n in local.names : n => {
      domain_name = libvirt_cluster_machine.this[n].domain_name
      uid         = libvirt_cluster_machine.this[n].uid
      mac         = libvirt_cluster_machine.this[n].mac
      ip          = libvirt_cluster_machine.this[n].ip
    }
  }
}
