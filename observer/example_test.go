package observer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/colonyrt/colony/actor"
	"github.com/colonyrt/colony/observer"
)

// A service mounts the observer on its own mux; the page is at the
// prefix, the JSON it reads under api/.
func ExampleHandler() {
	sys, _ := actor.Start(actor.Config{})
	defer sys.Shutdown(context.Background())
	pid, _ := sys.Spawn(actor.ActorFunc(func(*actor.Context, any) {}), actor.Name("greeter"))

	mux := http.NewServeMux()
	mux.Handle("/observer/", http.StripPrefix("/observer", observer.Handler(sys)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/observer/api/actor?peek=0&pid=" + url.QueryEscape(pid.String()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var d struct {
		Name      string `json:"name"`
		TrapExit  bool   `json:"trap_exit"`
		LinkCount int    `json:"link_count"`
	}
	json.NewDecoder(resp.Body).Decode(&d)
	fmt.Println(resp.StatusCode, d.Name, d.TrapExit, d.LinkCount)

	resp2, _ := http.Get(srv.URL + "/observer/api/actors?limit=5000")
	resp2.Body.Close()
	fmt.Println(resp2.StatusCode)
	// Output:
	// 200 greeter false 0
	// 400
}
