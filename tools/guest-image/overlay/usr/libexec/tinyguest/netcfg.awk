# netcfg.awk - turn a flattened (yamlflat.awk) cloud-init network-config,
# version 1 or 2, into simple directives, one per line:
#   iface ID MATCHKIND MATCHVALUE   (MATCHKIND: mac | name)
#   addr ID A.B.C.D/NN
#   gw ID A.B.C.D
#   route ID NET/NN VIA
#   dhcp ID
#   dns A.B.C.D
#   search DOMAIN
#   disabled
# Only IPv4 is handled; IPv6 entries are ignored.

function isv4(a) { return a ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+(\/[0-9]+)?$/ }
function truthy(v) { v = tolower(v); return v == "true" || v == "yes" || v == "on" || v == "1" }
function mask2len(m,   n, i, o, parts) {
	if (m ~ /^[0-9]+$/) return m
	n = 0; split(m, parts, ".")
	for (i = 1; i <= 4; i++) {
		o = parts[i] + 0
		while (o > 0) { n += o % 2; o = int(o / 2) }
	}
	return n
}
function cidr(a, m) {
	if (a ~ /\//) return a
	if (m != "") return a "/" mask2len(m)
	return a "/24"
}
function addid(id) { if (!(id in seen)) { seen[id] = 1; ids[++nids] = id } }

{
	eq = index($0, "="); if (!eq) next
	p = substr($0, 1, eq - 1); v = substr($0, eq + 1)
	sub(/^network\./, "", p)
	val[p] = v; keys[++nkeys] = p
}

END {
	version = val["version"]
	if (val["config"] == "disabled") { print "disabled"; exit }
	if (version == "1") {
		for (i = 1; i <= nkeys; i++) {
			p = keys[i]
			if (p !~ /^config\.[0-9]+\.type$/) continue
			split(p, a, "."); c = "config." a[2]
			t = val[p]
			if (t == "physical") {
				id = "c" a[2]; addid(id)
				if (val[c ".mac_address"] != "") match_[id] = "mac " tolower(val[c ".mac_address"])
				else match_[id] = "name " val[c ".name"]
				for (s = 0; (c ".subnets." s ".type") in val; s++) {
					sp = c ".subnets." s
					st = val[sp ".type"]
					if (st == "dhcp" || st == "dhcp4") dhcp[id] = 1
					else if ((st == "static" || st == "static4") && isv4(val[sp ".address"])) {
						addrs[id] = addrs[id] " " cidr(val[sp ".address"], val[sp ".netmask"])
						if (isv4(val[sp ".gateway"])) gw[id] = val[sp ".gateway"]
						for (j = 0; (sp ".dns_nameservers." j) in val; j++) dns[++ndns] = val[sp ".dns_nameservers." j]
						for (j = 0; (sp ".dns_search." j) in val; j++) search[++nsearch] = val[sp ".dns_search." j]
						for (j = 0; (sp ".routes." j ".gateway") in val; j++) {
							rp = sp ".routes." j
							net = cidr(val[rp ".network"], val[rp ".netmask"])
							if (net ~ /^0\.0\.0\.0\/0$/) gw[id] = val[rp ".gateway"]
							else if (isv4(net)) routes[id] = routes[id] " " net "," val[rp ".gateway"]
						}
					}
				}
			} else if (t == "nameserver") {
				for (j = 0; (c ".address." j) in val; j++) dns[++ndns] = val[c ".address." j]
				if ((c ".address") in val) dns[++ndns] = val[c ".address"]
				for (j = 0; (c ".search." j) in val; j++) search[++nsearch] = val[c ".search." j]
			}
		}
	} else {
		# version 2 (also the default when no version is given)
		for (i = 1; i <= nkeys; i++) {
			p = keys[i]
			if (p !~ /^ethernets\./) continue
			rest = substr(p, 11)
			# interface ids may not contain dots in practice
			id = rest; sub(/\..*$/, "", id)
			addid(id)
			f = substr(rest, length(id) + 2)
			v = val[p]
			if (f == "match.macaddress") match_[id] = "mac " tolower(v)
			else if (f == "match.name" && match_[id] !~ /^mac /) match_[id] = "name " v
			else if (f ~ /^addresses\.[0-9]+$/ && isv4(v)) addrs[id] = addrs[id] " " cidr(v, "")
			else if (f == "gateway4" && isv4(v)) gw[id] = v
			else if (f == "dhcp4" && truthy(v)) dhcp[id] = 1
			else if (f ~ /^nameservers\.addresses\.[0-9]+$/ && isv4(v)) dns[++ndns] = v
			else if (f ~ /^nameservers\.search\.[0-9]+$/) search[++nsearch] = v
			else if (f ~ /^routes\.[0-9]+\.to$/) {
				rp = substr(f, 1, length(f) - 3)
				via = val["ethernets." id "." rp ".via"]
				if (v == "default" || v == "0.0.0.0/0") { if (isv4(via)) gw[id] = via }
				else if (isv4(v) && isv4(via)) routes[id] = routes[id] " " cidr(v, "") "," via
			}
		}
	}
	for (i = 1; i <= nids; i++) {
		id = ids[i]
		m = match_[id]; if (m == "") m = "name " id
		print "iface " id " " m
		n = split(addrs[id], aa, " ")
		for (j = 1; j <= n; j++) print "addr " id " " aa[j]
		if (gw[id] != "") print "gw " id " " gw[id]
		n = split(routes[id], rr, " ")
		for (j = 1; j <= n; j++) { split(rr[j], r2, ","); print "route " id " " r2[1] " " r2[2] }
		if (dhcp[id]) print "dhcp " id
	}
	for (i = 1; i <= ndns; i++) if (isv4(dns[i]) && !(dns[i] in dseen)) { dseen[dns[i]] = 1; print "dns " dns[i] }
	for (i = 1; i <= nsearch; i++) if (!(search[i] in sseen)) { sseen[search[i]] = 1; print "search " search[i] }
}
