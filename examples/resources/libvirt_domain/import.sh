# A domain is imported by name or by UUID. Write the configuration the way you would
# have written it to create the domain: the next plan is then empty.
terraform import libvirt_domain.web web-1
terraform import libvirt_domain.web 2f0e3b1c-5d6a-4b8e-9f00-1a2b3c4d5e6f
