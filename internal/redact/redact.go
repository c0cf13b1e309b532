// Package redact keeps secrets out of what the provider logs and puts in diagnostics: the
// credentials and query of a URL (source_url), the values of qemu_env and qemu_args, and
// what a guest prints on its console that looks like a password, a token or a key. It is
// the one place where such patterns live; the rest of the code calls it and never
// matches secrets itself.
//
// What it does is conservative and deliberately simple: it masks values, never the names
// next to them, so a message still says what was there ("password=***", "qemu_env
// HTTP_PROXY=***"). It cannot find a secret that looks like anything else: a line the
// guest prints without a telling name next to it is shown as it is.
package redact

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Mask stands in for every value taken out.
const Mask = "***"

// URL returns a URL fit for messages and logs: any user and password replaced by "***"
// (the user name too: a token is often written as the user, https://<token>@host), its
// query (often a token: signed URLs, ?access_token=) replaced by "REDACTED", its fragment
// dropped. Of a string that does not parse as a URL only the scheme is shown: where its
// credentials end cannot be told.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if scheme, _, ok := strings.Cut(raw, "://"); ok && schemeRe.MatchString(scheme) {
			return scheme + "://[a URL that does not parse, not shown]"
		}
		return "[a URL that does not parse, not shown]"
	}
	r := *u
	hadUser := r.User != nil
	r.User = nil
	if r.RawQuery != "" || r.ForceQuery {
		r.RawQuery, r.ForceQuery = "REDACTED", false
	}
	r.Fragment, r.RawFragment = "", ""
	s := r.String()
	if hadUser && r.Host != "" {
		// url.URL would escape the mask as user info: put it in by hand.
		if scheme, rest, ok := strings.Cut(s, "://"); ok {
			s = scheme + "://" + Mask + "@" + rest
		}
	}
	return s
}

var schemeRe = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*$`)

// urlsInText finds, in an error message, the %q-quoted strings (where Go's http client
// puts the request's URL, "Get \"https://...\": ...", and a redirect's Location, absolute
// or not, when it does not parse) and bare URLs.
var urlsInText = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>()]+`)

// URLsIn returns s with every URL in it redacted (URL): quoted ones that carry a user, a
// query or a fragment, and bare ones.
func URLsIn(s string) string {
	return urlsInText.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] == '"' {
			q, err := strconv.Unquote(m)
			if err != nil || !strings.ContainsAny(q, "?@#") {
				return m
			}
			return strconv.Quote(URL(q))
		}
		// A bare URL: punctuation that ends a sentence is not part of it.
		u := strings.TrimRight(m, ".,:;!")
		return URL(u) + m[len(u):]
	})
}

// Error returns err with every URL in its message redacted (URLsIn), still unwrapping to
// err (errors.Is(err, context.DeadlineExceeded) and the like still hold). nil stays nil;
// an error without URLs is returned as it is.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := URLsIn(msg); clean != msg {
		return &redactedError{msg: clean, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (r *redactedError) Error() string { return r.msg }
func (r *redactedError) Unwrap() error { return r.err }

// Env returns the names of env with every value masked: NAME=*** (sorted by the caller's
// map order is not kept; use it for logs only).
func Env(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for k := range env {
		out[k] = Mask
	}
	return out
}

// Args returns QEMU command-line arguments fit for a log: an option name (a word that
// starts with "-" and holds no "=", "," or space, e.g. "-fw_cfg") is kept, every other
// argument (an option's value: "name=opt/x,string=...") is masked.
func Args(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if IsOptionName(a) {
			out[i] = a
		} else {
			out[i] = Mask
		}
	}
	return out
}

var optionName = regexp.MustCompile(`^--?[A-Za-z][A-Za-z0-9_.-]*$`)

// IsOptionName says whether a QEMU argument is an option's name ("-device"), which Args keeps.
func IsOptionName(a string) bool { return optionName.MatchString(a) }
