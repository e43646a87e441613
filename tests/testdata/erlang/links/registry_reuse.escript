#!/usr/bin/env escript
%% registry_reuse: a name freed by unregister goes to another pid, and sends by name follow it; a pid whose name was taken away can take a new one; a name freed by death can go to a pid only once that pid's own name is unregistered; a process can register itself.
-mode(compile).
-include("../colony_trace.hrl").

reg(Name, P) -> ev([register, Name, P, try_(fun() -> register(Name, P) end)]).
unreg(Name) -> ev([unregister, Name, try_(fun() -> unregister(Name) end)]).
where(Name) -> ev([whereis, Name, whereis(Name)]).

main(_) ->
    start_trace(),
    A = spawn_loop(a), B = spawn_loop(b),
    reg(worker, A),
    unreg(worker),
    reg(worker, B),
    where(worker),
    worker ! hello,
    await_fwd(B),
    reg(other, A),
    where(other),
    Ma = mon(A),
    cast(A, fun() -> exit(boom) end),
    await_down(Ma),
    where(other),
    reg(other, B),
    unreg(worker),
    reg(other, B),
    where(other),
    other ! again,
    await_fwd(B),
    C = spawn_loop(c),
    ev([call, C, call(C, fun() -> register(worker, self()) end)]),
    where(worker),
    mailbox().
