#!/usr/bin/env escript
%% peer_close_active: an active socket gets all the data the peer sent before closing, then tcp_closed; re-arming afterwards is ok and delivers nothing; sends after the peer closed end in {error, closed} once its reset comes back.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_tcp.hrl").

main(_) ->
    start_trace(),
    C = spawn_loop(c),
    {ok, L, Port} = tcp_listen(ls, 0),
    Cs = connect(C, cs, Port),
    Ss = accept(L, ss),
    send(C, Cs, 300000),
    shutdown(C, Cs),
    collect(Ss),
    setopts(main, Ss, once),
    quiet(),
    close(C, Cs),
    send_until_error(main, Ss),
    close(main, Ss),
    close(main, L),
    mailbox().
