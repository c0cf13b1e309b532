package rpc

import (
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	cases := []struct {
		raw       string
		transport Transport
		driver    string
		host      string
		user      string
		address   string
		driverURI string
		check     func(t *testing.T, u *URI)
	}{
		{raw: "qemu:///system", transport: TransportUnix, driver: "qemu", driverURI: "qemu:///system"},
		{raw: "qemu:///session", transport: TransportUnix, driver: "qemu", driverURI: "qemu:///session"},
		{raw: "test:///default", transport: TransportUnix, driver: "test", driverURI: "test:///default"},
		{raw: "qemu+unix:///system?socket=/tmp/s", transport: TransportUnix, driver: "qemu", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if u.LocalSocket() != "/tmp/s" {
					t.Errorf("LocalSocket = %q", u.LocalSocket())
				}
			}},
		{raw: "qemu+ssh://root@example.com/system", transport: TransportSSH, driver: "qemu", host: "example.com", user: "root", address: "example.com:22", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if u.RemoteSocket() != "/var/run/libvirt/libvirt-sock" {
					t.Errorf("RemoteSocket = %q", u.RemoteSocket())
				}
			}},
		{raw: "qemu+ssh://admin@10.0.0.5:2222/system?keyfile=/k&known_hosts=/kh&no_verify=1&socket=/run/libvirt/virtqemud-sock",
			transport: TransportSSH, driver: "qemu", host: "10.0.0.5", user: "admin", address: "10.0.0.5:2222", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if u.Keyfile != "/k" || u.KnownHosts != "/kh" || !u.NoVerify || u.RemoteSocket() != "/run/libvirt/virtqemud-sock" {
					t.Errorf("query parameters not kept: %+v", u)
				}
			}},
		{raw: "qemu+libssh2://h/system", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///system"},
		{raw: "qemu+tcp://host/system", transport: TransportTCP, driver: "qemu", host: "host", address: "host:16509", driverURI: "qemu:///system"},
		{raw: "qemu+tls://host:1234/system?pkipath=/pki", transport: TransportTLS, driver: "qemu", host: "host", address: "host:1234", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if u.PKIPath != "/pki" {
					t.Errorf("pkipath = %q", u.PKIPath)
				}
			}},
		// libvirt's default transport for a URI with a host is TLS.
		{raw: "qemu://host/system", transport: TransportTLS, driver: "qemu", host: "host", address: "host:16514", driverURI: "qemu:///system"},
		{raw: "qemu+tcp://[::1]/system", transport: TransportTCP, driver: "qemu", host: "::1", address: "[::1]:16509", driverURI: "qemu:///system"},
		// Options of libvirt's C client for what this provider does differently are accepted.
		{raw: "qemu+ssh://h/system?mode=legacy&no_tty=1&proxy=native&netcat=/bin/nc&command=/usr/bin/ssh", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///system"},
		{raw: "qemu+tls://h/system?tls_priority=NORMAL", transport: TransportTLS, driver: "qemu", host: "h", address: "h:16514", driverURI: "qemu:///system"},
		{raw: "qemu+ssh://h/system?known_hosts_verify=normal", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if u.KnownHostsIgnore || u.NoVerify {
					t.Error("known_hosts_verify=normal turned verification off")
				}
			}},
		{raw: "qemu+ssh://h/system?known_hosts_verify=ignore", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if !u.KnownHostsIgnore {
					t.Error("known_hosts_verify=ignore not kept")
				}
			}},
		{raw: "qemu+ssh://h/system?sshauth=keyboard-interactive,agent,privkey,agent", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///system",
			check: func(t *testing.T, u *URI) {
				if strings.Join(u.SSHAuth, ",") != "keyboard-interactive,agent,privkey" {
					t.Errorf("sshauth = %q", u.SSHAuth)
				}
			}},
		{raw: "qemu+ssh://h/system?name=qemu:///session", transport: TransportSSH, driver: "qemu", host: "h", address: "h:22", driverURI: "qemu:///session"},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := ParseURI(tc.raw)
			if err != nil {
				t.Fatalf("ParseURI: %v", err)
			}
			if u.Transport != tc.transport || u.Driver != tc.driver || u.Host != tc.host || u.User != tc.user {
				t.Errorf("got transport=%s driver=%s host=%s user=%s", u.Transport, u.Driver, u.Host, u.User)
			}
			if tc.address != "" && u.Address() != tc.address {
				t.Errorf("Address = %s, want %s", u.Address(), tc.address)
			}
			if u.DriverURI() != tc.driverURI {
				t.Errorf("DriverURI = %s, want %s", u.DriverURI(), tc.driverURI)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
		})
	}
}

func TestParseURIErrors(t *testing.T) {
	cases := map[string]string{
		"":                                                "empty",
		"/var/run/libvirt/libvirt-sock":                   "has no driver",
		"qemu+carrier://host/system":                      `transport "carrier"`,
		"qemu+ssh:///system":                              "names no host",
		"qemu+unix://host/system":                         "unix transport is local",
		"qemu+tcp://host:99999/system":                    "port",
		"qemu+ssh://u:secret@host/system":                 "contains a password",
		"qemu+ssh://host/system?bogus=1":                  `unknown query parameter "bogus"`,
		"qemu+ssh://host/system?no_verify=maybe":          "no_verify",
		"+ssh://host/system":                              "not a valid URI",
		"qemu+ssh://host/system?known_hosts_verify=auto":  "known_hosts_verify=auto",
		"qemu+ssh://host/system?known_hosts_verify=maybe": "expected normal, ignore or auto",
		"qemu+ssh://host/system?sshauth=gssapi":           `unknown method "gssapi"`,
		"qemu+ssh://host/system?sshauth=":                 "sshauth",
		"qemu+ssh://host/system?name=":                    "name= is empty",
		// A URI that is wrong in other ways never shows its password either.
		"qemu+ssh://u:secret@host:bad/system":     "not a valid URI",
		"qemu+ssh://u:sec%zzret@host/system":      "not a valid URI",
		"qemu+ssh://u:secret@[::1/system":         "not a valid URI",
		"qemu+carrier://u:secret@host/system":     "contains a password",
		"qemu+unix://u:secret@host/system":        "contains a password",
		"qemu+tcp://u:secret@host:99999/system":   "contains a password",
		"qemu+ssh://u:secret@host/system?bogus=1": "contains a password",
		"qemu+ssh:u:secret@host":                  "names no host",
		"qemu+ssh://u:se/cret@host/system":        "not a valid URI",
	}
	for raw, want := range cases {
		t.Run(raw, func(t *testing.T) {
			_, err := ParseURI(raw)
			if err == nil {
				t.Fatalf("ParseURI(%q) succeeded, want error containing %q", raw, want)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sec%zz") || strings.Contains(err.Error(), "cret") {
				t.Errorf("error leaks the password: %q", err)
			}
		})
	}
}

// FuzzParseURIPassword: whatever else is wrong with a URI, its error never quotes the
// user:password part (the explicit cases in TestParseURIErrors also check fragments).
func FuzzParseURIPassword(f *testing.F) {
	f.Add("qemu+ssh", "s3cret", "host/system")
	f.Add("qemu+ssh", "s3cret", "host:bad/system")
	f.Add("qemu+carrier", "s3cret", "host/system?bogus=1")
	f.Add("qemu", "p%zzw0rd", "[::1/system")
	f.Fuzz(func(t *testing.T, scheme, password, rest string) {
		// A password of x's is what the redaction writes itself (user:xxxxx@): no leak to see.
		if strings.Trim(password, "x") == "" || strings.ContainsAny(password, "/?#@") || strings.ContainsAny(scheme, "/?#@:") {
			return
		}
		_, err := ParseURI(scheme + "://user:" + password + "@" + rest)
		if err != nil && strings.Contains(err.Error(), "user:"+password+"@") {
			t.Fatalf("error shows the password %q: %v", password, err)
		}
	})
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{"qemu:///system", "qemu+ssh://root@h:22/system?keyfile=/k", "qemu+tls://h/system?pkipath=/p", "test:///default", "qemu+tcp://[::1]:16509/system"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseURI(raw)
		if err != nil {
			return
		}
		// Every accepted URI must be usable: a transport, and a host exactly when remote.
		switch u.Transport {
		case TransportUnix:
			if u.Host != "" {
				t.Fatalf("unix transport with host %q from %q", u.Host, raw)
			}
			_ = u.LocalSocket()
		case TransportSSH, TransportTCP, TransportTLS:
			if u.Host == "" {
				t.Fatalf("%s transport without host from %q", u.Transport, raw)
			}
			if u.Address() == "" {
				t.Fatalf("empty address from %q", raw)
			}
		default:
			t.Fatalf("unknown transport %q from %q", u.Transport, raw)
		}
		if !strings.Contains(u.DriverURI(), "://") {
			t.Fatalf("driver URI %q from %q", u.DriverURI(), raw)
		}
	})
}
