#!/usr/bin/env escript
%% simple_one_for_one_many: 100 dynamic children; count_children; terminate_child by pid; id-based calls are errors on a simple_one_for_one supervisor.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_sup.hrl").

main(_) ->
    start_trace(),
    process_flag(trap_exit, true),
    Tmpl = #{id => dyn, start => {gen_server, start_link, [?MODULE]},
             restart => temporary, type => worker, modules => [worker]},
    Sup = start_sup(sup, #{strategy => simple_one_for_one, intensity => 1, period => 3600}, [Tmpl]),
    Ids = [list_to_atom("d" ++ integer_to_list(N)) || N <- lists:seq(1, 100)],
    Oks = [element(1, supervisor:start_child(Sup, [{worker, Id, #{quiet => true}}, []])) || Id <- Ids],
    ev([start_child, 100, lists:usort(Oks)]),
    counts(Sup),
    Killed = lists:sublist(Ids, 10),
    Rs = [supervisor:terminate_child(Sup, pid(Id)) || Id <- Killed],
    ev([terminate_child, 10, lists:usort(Rs)]),
    ev([terminate_child, d1, supervisor:terminate_child(Sup, pid(d1))]),
    counts(Sup),
    ev([which_children, length, length(supervisor:which_children(Sup))]),
    ev([terminate_child, dyn, supervisor:terminate_child(Sup, dyn)]),
    ev([restart_child, dyn, supervisor:restart_child(Sup, dyn)]),
    ev([delete_child, dyn, supervisor:delete_child(Sup, dyn)]),
    M = mon(Sup),
    true = exit(Sup, shutdown),
    await_down(M),
    await_exit(Sup),
    ev([alive_children, [Id || Id <- Ids, is_process_alive(pid(Id))]]),
    mailbox().
