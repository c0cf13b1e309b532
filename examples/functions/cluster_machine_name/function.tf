# The domain name libvirt_cluster_machine gives machine "worker-0" of namespace "default":
# "default-worker-0-" followed by 6 hex characters of sha256("default/worker-0").
output "worker_domain" {
  value = provider::libvirt::cluster_machine_name("default", "worker-0")
}
