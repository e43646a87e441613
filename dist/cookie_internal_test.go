package dist

import (
	"errors"
	"strings"
	"testing"

	"github.com/colonyrt/colony/dist/handshake"
)

// The digest of a Latin-1 cookie is OTP's: erlang:md5([atom_to_list(
// 'cøøkie') | "1234"]) on OTP 25 gives these bytes (the characters as
// bytes, not the UTF-8 text).
func TestCookieDigestIsOverLatin1Bytes(t *testing.T) {
	otp := [16]byte{30, 104, 214, 119, 8, 28, 185, 76, 15, 229, 176, 7, 234, 140, 231, 100}
	b, err := cookieBytes("cøøkie")
	if err != nil {
		t.Fatal(err)
	}
	if b != "c\xf8\xf8kie" {
		t.Errorf("cookie bytes %q", b)
	}
	if got := handshake.Digest(1234, b); got != otp {
		t.Errorf("digest % x, OTP's % x", got, otp)
	}
	if b, _ := cookieBytes("secret"); b != "secret" {
		t.Errorf("ASCII cookie %q", b)
	}
}

// A cookie OTP could not use is refused by Start, saying why.
func TestCookieOTPCannotUseIsRefused(t *testing.T) {
	for _, tc := range []struct{ cookie, why string }{
		{"c€kie", "past Latin-1"},
		{"c\xf8kie", "not valid UTF-8"},
		{strings.Repeat("ø", 256), "256 characters"},
	} {
		_, err := Config{Name: "a@127.0.0.1", Cookie: tc.cookie}.check()
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("cookie %q: %v, want ErrBadConfig saying %q", tc.cookie, err, tc.why)
		}
	}
	if _, err := (Config{Name: "a@127.0.0.1", Cookie: strings.Repeat("ø", 255)}).check(); err != nil {
		t.Errorf("255 Latin-1 characters: %v", err)
	}
}
