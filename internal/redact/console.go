package redact

import (
	"regexp"
	"strings"
)

// Console lines: what a guest printed on its serial console, quoted in the error of a wait
// that failed. A guest prints what it likes, and cloud-init in particular prints
// credentials it set. Lines masks, conservatively (the names stay, so the line still says
// what happened):
//
//   - the value after a name that says secret, followed by "=" or ":" (password=x,
//     "passwd": "x", token: x, api_key=x, secret=x, authorization: Bearer x, any *key=x):
//     password=***;
//   - everything after "chpasswd" on a line (cloud-init's chpasswd module and its list of
//     user:password pairs);
//   - the user:password lines cloud-init prints after "Set the following 'random'
//     passwords": root:***;
//   - the lines inside -----BEGIN ...----- / -----END ...----- blocks (PEM private keys,
//     cloud-init's SSH host key fingerprints and keys), and every line before an END
//     marker whose BEGIN fell out of the tail;
//   - SSH key fingerprints (SHA256:..., and MD5 aa:bb:...:ff) anywhere;
//   - the user and password of a URL (https://***@host/...), and its query.
//
// Anything else is kept as the guest wrote it: a secret without a telling name next to it
// cannot be told from the boot messages the tail is there to show.
func Lines(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	inBlock, randomPasswords := false, false
	for i, l := range lines {
		switch {
		case beginMarker.MatchString(l):
			inBlock = true
			out[i] = l
			continue
		case endMarker.MatchString(l):
			if !inBlock {
				// Its BEGIN fell out of the tail: what came before may be inside.
				for j := range i {
					out[j] = Mask
				}
			}
			inBlock = false
			out[i] = l
			continue
		case inBlock:
			out[i] = Mask
			continue
		}
		if randomPasswords && userPassword.MatchString(l) {
			m := userPassword.FindStringSubmatchIndex(l)
			out[i] = l[:m[3]] + Mask
			continue
		}
		randomPasswords = randomHeader.MatchString(l)
		out[i] = Line(l)
	}
	return out
}

// Line masks what looks like a secret in one line, as Lines does without the blocks that
// span lines.
func Line(l string) string {
	if i := chpasswd.FindStringIndex(l); i != nil {
		if rest := strings.TrimSpace(l[i[1]:]); rest != "" && rest != ":" {
			return l[:i[1]] + " " + Mask
		}
		return l
	}
	l = secretValue.ReplaceAllString(l, "${1}${2}"+Mask)
	l = fingerprint.ReplaceAllString(l, "${1}"+Mask)
	l = md5Fingerprint.ReplaceAllString(l, Mask)
	if strings.Contains(l, "://") {
		l = URLsIn(l)
	}
	return l
}

var (
	// A name that ends in a word that says secret (db_password, ssh_key, X-Auth-Token; not
	// keyboard), an optional closing quote, then "=" or ":" and the value: a quoted string
	// or one word. "Bearer" / "Basic" after authorization is kept, the credential masked.
	secretValue = regexp.MustCompile(`(?i)([\w.-]*(?:pass(?:word|wd|phrase)?|pwd|secrets?|tokens?|keys?|credentials?|authorization)["']?)` +
		`(\s*[=:]\s*(?:(?:bearer|basic|token)\s+)?)("[^"]*"|'[^']*'|[^\s,;&]+)`)
	chpasswd       = regexp.MustCompile(`(?i)chpasswd\b:?`)
	randomHeader   = regexp.MustCompile(`(?i)set the following .*passwords`)
	userPassword   = regexp.MustCompile(`^(\s*[A-Za-z_][A-Za-z0-9_.-]*:)(\S+)\s*$`)
	beginMarker    = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----`)
	endMarker      = regexp.MustCompile(`-----END [A-Z0-9 ]+-----`)
	fingerprint    = regexp.MustCompile(`\b((?:SHA256|SHA1|MD5):)[A-Za-z0-9+/=:]{16,}`)
	md5Fingerprint = regexp.MustCompile(`\b[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){15}\b`)
)
