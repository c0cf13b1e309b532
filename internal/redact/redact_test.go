package redact

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://host/img.qcow2":                         "https://host/img.qcow2",
		"https://host/img.qcow2?X-Amz-Signature=abc&x=1": "https://host/img.qcow2?REDACTED",
		"https://alice:hunter2@host:8443/a/b?t=1#frag":   "https://***@host:8443/a/b?REDACTED",
		"https://alice@host/x":                           "https://***@host/x",
		"https://alice:@host/x":                          "https://***@host/x",
		"http://host/x?":                                 "http://host/x?REDACTED",
		"file:///var/lib/img.qcow2":                      "file:///var/lib/img.qcow2",
		"http://alice:hunter2@host/%zz?sig=s3cr3t-token": "http://[a URL that does not parse, not shown]",
		"not a url at all ://\x7f":                       "[a URL that does not parse, not shown]",
		"https://[::1]:443/x?token=s3cr3t-token":         "https://[::1]:443/x?REDACTED",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestError(t *testing.T) {
	base := fmt.Errorf(`Get "https://alice:hunter2@h/x?sig=s3cr3t-token": %w`, context.DeadlineExceeded)
	err := Error(base)
	for _, s := range []string{"alice", "hunter2", "s3cr3t-token"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("Error shows %q: %v", s, err)
		}
	}
	if !strings.Contains(err.Error(), `Get "https://***@h/x?REDACTED"`) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Error = %v (unwraps to the deadline: %v)", err, errors.Is(err, context.DeadlineExceeded))
	}
	plain := errors.New("no url here")
	if got := Error(plain); !errors.Is(got, plain) || got.Error() != plain.Error() || Error(nil) != nil {
		t.Error("an error without URLs must pass as it is")
	}
	if got := URLsIn("see https://bob:pw@example.org/a?b=c."); got != "see https://***@example.org/a?REDACTED." {
		t.Errorf("URLsIn = %q", got)
	}
}

func TestEnvArgs(t *testing.T) {
	env := Env(map[string]string{"HTTP_PROXY": "http://u:p@proxy", "TOKEN": "abc"})
	if len(env) != 2 || env["HTTP_PROXY"] != Mask || env["TOKEN"] != Mask {
		t.Errorf("Env = %v", env)
	}
	if Env(nil) != nil {
		t.Error("Env(nil) is not nil")
	}
	got := Args([]string{"-fw_cfg", "name=opt/secret,string=hunter2", "--no-reboot", "-device", "virtio-rng", "-append", "root=/dev/vda pw=x", "-x=1"})
	want := []string{"-fw_cfg", Mask, "--no-reboot", "-device", Mask, "-append", Mask, Mask}
	if !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}

func TestLines(t *testing.T) {
	in := []string{
		"[    0.000000] Linux version 6.1.0 (gcc 12.2.0)",
		"cloud-init[612]: password=hunter2 user=alice",
		`{"passwd": "s3cr3t one", "name": "bob"}`,
		"export API_KEY=abc123def; echo ok",
		"Authorization: Bearer eyJhbGciOi.tok.en",
		"db_password: correct-horse",
		"keyboard: us layout", // not a secret name: kept
		"chpasswd: root:hunter3 alice:hunter4",
		"Set the following 'random' passwords",
		"root:Xk2pQ9vZ",
		"ubuntu:Lm3Nq8rT",
		"Cloud-init v. 23.1 finished",
		"ec2: -----BEGIN SSH HOST KEY FINGERPRINTS-----",
		"ec2: 256 SHA256:8nJx2p5v3Zy8mQ1o4kT7bW0cR6dF9gH2jL5sA1eX3uY root@vm (ED25519)",
		"ec2: -----END SSH HOST KEY FINGERPRINTS-----",
		"ci-info: | ssh-ed25519 | SHA256:8nJx2p5v3Zy8mQ1o4kT7bW0cR6dF9gH2jL5sA1eX3uY | - | me@laptop |",
		"old style 43:51:43:a1:b5:fc:8b:b7:0a:3a:a9:b1:0f:66:73:a8 key",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		"b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
		"-----END OPENSSH PRIVATE KEY-----",
		"fetching https://alice:hunter5@mirror/img?sig=t0ken",
		"login: ",
	}
	got := Lines(in)
	all := strings.Join(got, "\n")
	for _, s := range []string{"hunter2", "s3cr3t", "abc123def", "eyJhbGciOi", "correct-horse", "hunter3", "hunter4", "Xk2pQ9vZ",
		"Lm3Nq8rT", "8nJx2p5v3Zy8", "43:51:43:a1", "b3BlbnNzaC1", "hunter5", "t0ken", "alice:"} {
		if strings.Contains(all, s) {
			t.Errorf("Lines shows %q:\n%s", s, all)
		}
	}
	for _, s := range []string{in[0], "password=***", "user=alice", `"passwd": ***`, `"name": "bob"`, "API_KEY=***; echo ok",
		"Authorization: Bearer ***", "db_password: ***", "keyboard: us layout", "chpasswd: ***", "root:***", "ubuntu:***",
		"Cloud-init v. 23.1 finished", "SHA256:***", "-----BEGIN OPENSSH PRIVATE KEY-----", "https://***@mirror/img?REDACTED", "login: "} {
		if !strings.Contains(all, s) {
			t.Errorf("Lines lost %q:\n%s", s, all)
		}
	}
	if len(got) != len(in) {
		t.Fatalf("%d lines in, %d out", len(in), len(got))
	}
	// The BEGIN fell out of the tail: what precedes the END is masked.
	cut := Lines([]string{"AAAAB3NzaC1yc2EAAAADAQABAAABAQ", "xyzzy", "-----END RSA PRIVATE KEY-----", "login: "})
	if !slices.Equal(cut, []string{Mask, Mask, "-----END RSA PRIVATE KEY-----", "login: "}) {
		t.Errorf("tail cut inside a block: %q", cut)
	}
	if Lines(nil) != nil {
		t.Error("Lines(nil) is not nil")
	}
}
