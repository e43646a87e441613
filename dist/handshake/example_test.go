package handshake_test

import (
	"fmt"

	"github.com/colonyrt/colony/dist/handshake"
)

// The digest both sides compute: MD5 of the cookie and the challenge in
// decimal, as erlang:md5("cookie" ++ integer_to_list(1234567890)).
func ExampleDigest() {
	fmt.Printf("%x\n", handshake.Digest(1234567890, "cookie"))
	// Output: fa769da4364d472c1638dfb796e4ab60
}

func ExampleFlags_String() {
	fmt.Println(handshake.Mandatory26)
	// Output: [UNLINK_ID,V4_NC]
}
