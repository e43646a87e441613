package netio_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The package doc is doc.go's contract, not a file's design note: a
// comment right above a package clause joins the package doc, and go doc
// ./io showed rawsys.go's syscall note as the package's documentation.
func TestPackageDocIsTheContract(t *testing.T) {
	// Every netio file, whatever its build constraints: a note above the
	// package clause of another platform's file would join the doc there.
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "netio" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no package netio here")
	}
	d, err := doc.NewFromFiles(fset, files, "github.com/colonyrt/colony/io")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Doc, "Package netio ") {
		t.Fatalf("package doc starts %.60q", d.Doc)
	}
	if strings.Contains(d.Doc, "Design note") {
		t.Fatal("a file's design note is part of the package doc: leave a blank line between it and the package clause")
	}
}
