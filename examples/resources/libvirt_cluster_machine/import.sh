# A machine made by libvirt_cluster_machine is imported by its domain name or its uid
# (the domain UUID). Its inputs (namespace, name, network, pools, image) are read back from
# the domain's metadata and user_data from its seed, so a configuration written as for
# the create plans clean. Domains made otherwise are refused: import them as libvirt_domain.
terraform import libvirt_cluster_machine.worker prod-worker-0-8354d9
terraform import libvirt_cluster_machine.worker 2f0e3b1c-5d6a-4b8e-9f00-1a2b3c4d5e6f
