// Package observer serves a live view of a running actor.System over
// HTTP: what OTP's observer and recon show, for a service to mount on its
// own mux.
//
//	mux.Handle("/observer/", http.StripPrefix("/observer", observer.Handler(sys)))
//
// The handler serves one page, embedded in the binary (no build step, no
// CDN: it works offline), that first renders the figures the server
// embeds in it, keeps its view (tab, sort, open actor) in its query
// string so that a view can be linked, and updates itself by server-sent
// events, opened a second after it loaded so that the network settles: a
// dashboard (scheduler utilisation and run queues, message, spawn and exit
// rates, live actors, memory, handling time and mailbox latency), a
// process table sortable by mailbox length, messages handled per window,
// memory and state (the top entries of a full scan, recon-style, and the
// whole table in slot order, paged, for a million actors), the supervision
// trees with restart counts and last exit reasons, an actor's detail
// (links, monitors, timers, sockets, a bounded peek at its mailbox, the
// stack of a blocked handler) and the crash log.
//
// The JSON endpoints the page uses are documented in
// docs/observability.md; all are read-only unless AllowActions is given,
// which enables kill and send (POST only). Bad input gets a 4xx answer
// with a JSON body {"error": "..."}: a malformed pid, a query parameter
// the endpoint does not know, a page size above MaxPageSize. The page
// itself takes any query: it is the page's state, read by its script.
//
// Cost. The handler watches the System's reports for its whole life (one
// call per report, for the crash log and the restart counts). It turns the
// runtime's sampling on (actor.System.Observe), and the labelling of
// blocked handlers that shows their stacks (actor.System.ObserveStacks,
// about a microsecond a block), at the first request and off again after a
// minute without one (a page load counts, and when no sample is recent it
// measures one over 250 ms before answering, for the first render's
// rates), so a mounted observer that nobody looks at costs the hot paths
// nothing. A handler blocked before that shows no stack. A full scan of
// the actors (the sorted process table) runs at most once a second
// however many pages are open, and a sampler goroutine runs only while an
// event stream is open.
package observer
