package netio_test

import (
	"go/doc"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// The package doc is doc.go's contract, not a file's design note: a
// comment right above a package clause joins the package doc, and go doc
// ./io showed rawsys.go's syscall note as the package's documentation.
func TestPackageDocIsTheContract(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := pkgs["netio"]
	if !ok {
		t.Fatalf("no package netio here (found %d packages)", len(pkgs))
	}
	d := doc.New(p, "github.com/colonyrt/colony/io", 0)
	if !strings.HasPrefix(d.Doc, "Package netio ") {
		t.Fatalf("package doc starts %.60q", d.Doc)
	}
	if strings.Contains(d.Doc, "Design note") {
		t.Fatal("a file's design note is part of the package doc: leave a blank line between it and the package clause")
	}
}
