#!/usr/bin/env escript
%% enter_restrictions: an enter call that postpones, inserts an event or changes state stops the machine with OTP's error; replies set before the bad action are sent; terminate sees the state being entered.
-mode(compile).
-include("../colony_trace.hrl").
-include("../colony_statem.hrl").

main(_) ->
    start_trace(),
    Bad = [{in, b, [{reply_held, held_ok}, postpone]},
           {in, c, [{ne, internal, x}]},
           {in, d, [{next, a}]}],
    lists:foreach(
      fun({Name, Target}) ->
              S = start_sm(Name, #{enter => Bad}),
              M = mon(S),
              await_sm(Name),
              sm_call_async(S, {wait, [hold]}, 5000),
              await_sm(Name),
              sm_cast(S, {go, [{next, Target}]}),
              await_sm(Name, 3),
              await_sm_down(M),
              await_call()
      end, [{s1, b}, {s2, c}, {s3, d}]),
    mailbox().
