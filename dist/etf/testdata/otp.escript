#!/usr/bin/env escript
%%! -noinput
%% The Erlang side of dist/etf's tests.
%%
%%   otp.escript vectors   prints one line "Name Hex" per term below: the
%%                         bytes of term_to_binary(Term, Opts), 131 included.
%%   otp.escript echo      reads {packet,4} frames on stdin, each a
%%                         term_to_binary encoding, and answers each with a
%%                         frame <<0, (term_to_binary(binary_to_term(B),
%%                         [{minor_version,2}]))/binary>>, or <<1, Why/binary>>
%%                         when binary_to_term refuses B; it stops at eof.
-mode(compile).

main(["vectors"]) ->
    [io:format("~s ~s~n", [Name, hex(term_to_binary(T, Opts))]) || {Name, T, Opts} <- vectors()],
    ok;
main(["echo"]) ->
    Port = open_port({fd, 0, 1}, [{packet, 4}, binary, eof]),
    echo(Port).

echo(Port) ->
    receive
        {Port, {data, B}} ->
            Reply = try binary_to_term(B) of
                        T -> [0, term_to_binary(T, [{minor_version, 2}])]
                    catch
                        C:R -> [1, io_lib:format("~p:~p", [C, R])]
                    end,
            port_command(Port, Reply),
            echo(Port);
        {Port, eof} ->
            halt(0)
    end.

hex(B) -> [io_lib:format("~2.16.0b", [X]) || <<X>> <= B].

vectors() ->
    V2 = [{minor_version, 2}],
    V0 = [{minor_version, 0}],
    [{"small_int", 42, V2},
     {"int_neg", -1, V2},
     {"int_256", 256, V2},
     {"int_max32", 2147483647, V2},
     {"int_min32", -2147483648, V2},
     {"big_2_32", 1 bsl 32, V2},
     {"big_max64", (1 bsl 63) - 1, V2},
     {"big_min64", -(1 bsl 63), V2},
     {"big_2_63", 1 bsl 63, V2},
     {"big_neg_2_100", -(1 bsl 100), V2},
     {"large_big", 1 bsl 2100, V2},
     {"float", 3.14, V2},
     {"float_neg_zero", -0.0, V2},
     {"float_ext", 3.14, V0},
     {"atom", foo, V2},
     {"atom_latin1", 'héllo', V2},
     {"atom_ext", 'héllo', V0},
     {"atom_unicode", '日本', V2},
     {"atom_long", list_to_atom(lists:duplicate(200, 16#e9)), V2},
     {"atom_empty", '', V2},
     {"true", true, V2},
     {"false", false, V2},
     {"undefined", undefined, V2},
     {"nil", [], V2},
     {"string", "abc", V2},
     {"string_unicode", "日本", V2},
     {"list", [1, foo, <<"x">>], V2},
     {"improper", [a | b], V2},
     {"improper_long", [1, 2, 3 | 4.0], V2},
     {"tuple0", {}, V2},
     {"tuple", {ok, 1}, V2},
     {"tuple_large", list_to_tuple(lists:seq(1, 300)), V2},
     {"binary_empty", <<>>, V2},
     {"binary", <<1, 2, 3>>, V2},
     {"bitbin", <<1:3>>, V2},
     {"bitbin_long", <<1, 2, 3:4>>, V2},
     {"map_empty", #{}, V2},
     {"map", #{a => 1}, V2},
     {"map_tuple_key", #{{x} => 1}, V2},
     {"map_binary_key", #{<<"id">> => 7}, V2},
     {"map_sorted", #{b => 2, a => 1, 1 => x, 2.0 => y, <<"k">> => z, true => t, -5 => n}, V2},
     {"map_big_key", #{true => t, 2.0 => y, 1 bsl 70 => big, -5 => n}, V2},
     {"pid", list_to_pid("<0.1.0>"), V2},
     {"ref", list_to_ref("#Ref<0.1.2.3>"), V2},
     {"port", list_to_port("#Port<0.5>"), V2},
     {"export", fun lists:map/2, V2},
     {"fun", fun(X) -> X + 1 end, V2},
     {"compressed", lists:duplicate(1000, a), [compressed | V2]},
     {"nested", {reply, [{k, #{n => [1, 2]}}], <<"body">>}, V2}].
