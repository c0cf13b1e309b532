# yamlflat.awk - flatten the simple YAML (or JSON) that NoCloud seeds use into
# "path=value" lines, e.g.
#   ethernets.eth0.match.macaddress=52:54:00:12:34:56
#   ethernets.eth0.addresses.0=192.168.122.10/24
# Handles block mappings and lists (including "- key: v" items and lists at the
# same indent as their key), flow collections on one line ([a, b], {k: v}),
# a document that is JSON as a whole, quotes, comments and block scalars
# (skipped). Anchors, aliases, tags and multi-line flow values are not handled.
# Runs under busybox awk.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function unq(s,   q) {
	s = trim(s)
	q = substr(s, 1, 1)
	if ((q == "\"" || q == "'") && substr(s, length(s), 1) == q && length(s) >= 2)
		s = substr(s, 2, length(s) - 2)
	return s
}
function join(p, k) { return p == "" ? k : p "." k }
function emit(p, v) { print p "=" v }

# --- flow (JSON-like) parser over global F at position P ---
function skipws() { while (P <= length(F) && substr(F, P, 1) ~ /[ \t\r\n]/) P++ }
function pscalar(stops,   c, s, q) {
	skipws(); c = substr(F, P, 1)
	if (c == "\"" || c == "'") {
		q = c; P++; s = ""
		while (P <= length(F)) {
			c = substr(F, P, 1)
			if (c == "\\" && q == "\"") { s = s substr(F, P + 1, 1); P += 2; continue }
			if (c == q) { P++; break }
			s = s c; P++
		}
		# skip to the next stop character
		while (P <= length(F) && !index(stops, substr(F, P, 1))) P++
		return s
	}
	s = ""
	while (P <= length(F)) {
		c = substr(F, P, 1)
		if (index(stops, c)) break
		s = s c; P++
	}
	return trim(s)
}
function pflow(path,   c, k, i) {
	skipws(); c = substr(F, P, 1)
	if (c == "{") {
		P++
		while (P <= length(F)) {
			skipws(); c = substr(F, P, 1)
			if (c == "}") { P++; return }
			if (c == ",") { P++; continue }
			k = pscalar(":,}")
			if (substr(F, P, 1) == ":") { P++; pflow(join(path, k)) }
		}
	} else if (c == "[") {
		P++; i = 0
		while (P <= length(F)) {
			skipws(); c = substr(F, P, 1)
			if (c == "]") { P++; return }
			if (c == ",") { P++; continue }
			pflow(join(path, i)); i++
		}
	} else {
		emit(path, pscalar(",]}"))
	}
}

BEGIN { D = 0; IND[0] = -1; ITEM[0] = 0; PATH[0] = ""; LC[0] = 0; bs = -1 }

{
	line = $0
	sub(/\r$/, "", line)
	match(line, /^ */); n = RLENGTH
	if (bs >= 0) {                       # inside a block scalar: skip it
		if (line ~ /^[ \t]*$/ || n > bs) next
		bs = -1
	}
	if (line ~ /^[ \t]*(#|$)/) next
	if (line ~ /^(---|\.\.\.)[ \t]*$/) next
	sub(/^--- /, "", line)
	# strip trailing comments (not inside quotes: only after the last quote)
	if (line ~ /["']/) {
		tail = line; head = ""
		if (match(tail, /.*["']/)) { head = substr(tail, 1, RLENGTH); tail = substr(tail, RLENGTH + 1) }
		sub(/[ \t]+#.*$/, "", tail); line = head tail
	} else sub(/[ \t]+#.*$/, "", line)
	c = substr(line, n + 1)
	sub(/[ \t]+$/, "", c)

	# a whole document in flow style / JSON
	if (D == 0 && NRDOC == 0 && c ~ /^[{\[]/) {
		F = c
		while ((getline l) > 0) F = F " " l
		P = 1; pflow(""); exit
	}
	NRDOC++

	# list items (possibly nested "- - x")
	while (c ~ /^-( |$)/) {
		while (D > 0 && (IND[D] > n || (IND[D] == n && ITEM[D]))) D--
		p = D
		idx = LC[p]++
		D++; IND[D] = n; ITEM[D] = 1; PATH[D] = join(PATH[p], idx); LC[D] = 0
		c = substr(c, 2); match(c, /^ */); n = n + 1 + RLENGTH; c = substr(c, RLENGTH + 1)
	}
	if (c == "") next

	if (match(c, /^("[^"]*"|'[^']*'|[^ \t:#"'\[{][^:#]*):( |$)/)) {
		k = substr(c, 1, RLENGTH); sub(/:[ ]?$/, "", k); k = unq(k)
		v = trim(substr(c, RLENGTH + 1))
		while (D > 0 && IND[D] >= n) D--
		path = join(PATH[D], k)
		if (v == "") {
			D++; IND[D] = n; ITEM[D] = 0; PATH[D] = path; LC[D] = 0
		} else if (v ~ /^[\[{]/) {
			F = v; P = 1; pflow(path)
		} else if (v ~ /^[|>][-+0-9]*$/) {
			bs = n
		} else {
			emit(path, unq(v))
		}
	} else if (c ~ /^[\[{]/) {
		F = c; P = 1; pflow(PATH[D])
	} else {
		emit(PATH[D], unq(c))
	}
}
