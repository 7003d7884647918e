"""What COMMAND DOCS and COMMAND INFO must say of a family of the module's
own commands: a summary, a complexity and the module's name in the docs, the
arguments by name, read or write flags, and the first key spec's access."""
from resp import RespClient, pairs, text


def check_command_docs(port, expected_args, reads, writes, overwrites):
    """expected_args: command name -> its arguments' names; reads and writes:
    the names flagged readonly and write; overwrites: the writes whose key
    spec is OW (a value replaced whole), the others' being RW, reads' RO."""
    with RespClient(port) as c:
        for name, args in expected_args.items():
            docs = c.call("COMMAND", "DOCS", name).value
            assert len(docs) == 2 and text(docs[0]).lower() == name, docs
            d = pairs(docs[1].value)
            assert text(d["summary"]) and text(d["complexity"]), d
            assert text(d["module"]) == "sketch"
            assert [text(pairs(a.value)["name"]) for a in d["arguments"].value] == args
            command_info = c.call("COMMAND", "INFO", name).value[0].value
            flags = {text(f) for f in command_info[2].value}
            assert ("readonly" in flags) == (name in reads), (name, flags)
            assert ("write" in flags) == (name in writes), (name, flags)
            specs = [pairs(spec.value) for spec in command_info[8].value]
            kind = {"RW", "RO", "OW"} & {text(f) for f in specs[0]["flags"].value}
            assert kind == ({"RO"} if name in reads else {"OW"} if name in overwrites
                            else {"RW"}), name
