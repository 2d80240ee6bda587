#!/usr/bin/env python3
"""Writes the GitHub operations CodegenBench generates beside the hand-written ones (Benchmarks/Codegen/Operations).

    .venv-codegen/bin/python Benchmarks/Codegen/make-operations.py [--seed 27] [--total 200] [--schema PATH]

CodegenBench generates 200 operations on GitHub's public schema: the 72 of Tests/GQLCodegenTests/Fixtures/GitHub,
the 10 of Operations/Compared.graphql (written by hand, with their hand-written Swift in HandWritten/) and the ones
this script writes (as many as make 200: 118 while the fixtures hold 72; run it again when they change). It walks the schema from a seeded random generator (the seed is printed; the same seed and schema
give the same bytes): a root field of Query (repository, user, organization, viewer, search, node, …) or a mutation
taking one `input`, its required arguments as variables, then a few leaf fields per object, a few nested objects or
connections (`first: 10`, `nodes`, `totalCount`, `pageInfo { ...PageInfoParts }`), inline fragments on interfaces and
unions, and the fixtures' fragments (ActorParts, LabelParts, PageInfoParts) where their types come up. Deprecated
fields are left out. Every operation is validated with graphql-core (the rules ariadne-codegen applies) together with
the fixtures, and drawn again when it does not pass, so the set is valid for both generators.

Needs graphql-core (the .venv-codegen that `make bench-codegen` makes); the schema is read from ../shared/corpus.
"""
import argparse
import pathlib
import random
import re
import sys

from graphql import (
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLUnionType,
    NoUnusedFragmentsRule,
    build_ast_schema,
    get_named_type,
    is_non_null_type,
    parse,
    print_ast,
    specified_rules,
    validate,
)

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIXTURES = ROOT / "Tests/GQLCodegenTests/Fixtures/GitHub"
# Root fields of Query and how often each is drawn: the entry points an app uses most, most often.
QUERY_ROOTS = [
    ("repository", 34), ("user", 12), ("organization", 12), ("viewer", 10), ("search", 5), ("node", 5),
    ("repositoryOwner", 3), ("topic", 3), ("securityAdvisories", 2), ("securityAdvisory", 2), ("license", 2),
    ("codeOfConduct", 1), ("enterprise", 2), ("rateLimit", 1), ("marketplaceListing", 1), ("resource", 2),
    ("sponsorables", 1), ("licenses", 1), ("codesOfConduct", 1), ("meta", 1),
]
# Types the fixtures have a fragment for: selected through it, as an app that has one would.
FRAGMENTS = {"PageInfo": "PageInfoParts", "Actor": "ActorParts", "Label": "LabelParts"}


def camel(name):
    return name[:1].upper() + name[1:]


def type_text(type_):
    return str(type_)


class Walker:
    """Draws one operation's selections from the schema."""

    def __init__(self, schema, rng):
        self.schema = schema
        self.rng = rng

    @staticmethod
    def usable(field):
        return field.deprecation_reason is None and not any(
            is_non_null_type(argument.type) for argument in field.args.values()
        )

    @staticmethod
    def is_leaf(field):
        return isinstance(get_named_type(field.type), (GraphQLScalarType, GraphQLEnumType))

    def leaves(self, type_, low, high):
        names = [name for name, field in type_.fields.items() if self.usable(field) and self.is_leaf(field)]
        chosen = sorted(self.rng.sample(names, min(len(names), self.rng.randint(low, high))), key=names.index)
        if "id" in names and "id" not in chosen and self.rng.random() < 0.6:
            chosen.insert(0, "id")
        return chosen

    def arguments(self, field):
        # Pagination with a literal page size, as most app queries do; nothing else (every other argument is optional).
        return "(first: 10)" if "first" in field.args else ""

    def selection(self, type_, depth, budget):
        """The text inside the braces of a selection on `type_` (a composite type), at most about `budget` fields."""
        if type_.name in FRAGMENTS and self.rng.random() < 0.8:
            return f"...{FRAGMENTS[type_.name]}"
        if isinstance(type_, GraphQLUnionType):
            return self.abstract(type_, list(type_.types), [], depth, budget)
        if isinstance(type_, GraphQLInterfaceType):
            possible = sorted(self.schema.get_possible_types(type_), key=lambda t: t.name)
            return self.abstract(type_, possible, self.leaves(type_, 1, 3), depth, budget)
        if type_.name.endswith("Connection") and "nodes" in type_.fields:
            return self.connection(type_, depth, budget)
        parts = self.leaves(type_, 2, 6)
        if depth < 3:
            composite = [
                (name, field) for name, field in type_.fields.items()
                if self.usable(field) and not self.is_leaf(field)
            ]
            count = self.rng.randint(1 if depth == 0 else 0, 3 if depth == 0 else (2 if depth == 1 else 1))
            for name, field in self.rng.sample(composite, min(len(composite), count)):
                inner = self.selection(get_named_type(field.type), depth + 1, budget - len(parts))
                parts.append(f"{name}{self.arguments(field)} {{ {inner} }}")
        return " ".join(parts) if parts else "__typename"

    def connection(self, type_, depth, budget):
        parts = ["totalCount"] if "totalCount" in type_.fields and self.rng.random() < 0.8 else []
        node = get_named_type(type_.fields["nodes"].type)
        parts.append(f"nodes {{ {self.selection(node, depth + 1, budget - 2)} }}")
        if "pageInfo" in type_.fields and self.rng.random() < 0.6:
            parts.append("pageInfo { ...PageInfoParts }")
        return " ".join(parts)

    def abstract(self, type_, possible, common, depth, budget):
        parts = ["__typename"] + common
        for member in self.rng.sample(possible, min(len(possible), self.rng.randint(1, 3))):
            if isinstance(member, GraphQLObjectType):
                fields = " ".join(f for f in self.leaves(member, 1, 4) if f not in common)
                if fields:
                    parts.append(f"... on {member.name} {{ {fields} }}")
        return " ".join(parts)


def variables_of(field, rename=None):
    """`$name: Type` for each required argument, and the call's arguments."""
    definitions, arguments = [], []
    for name, argument in field.args.items():
        if is_non_null_type(argument.type):
            variable = (rename or {}).get(name, name)
            definitions.append(f"${variable}: {type_text(argument.type)}")
            arguments.append(f"{name}: ${variable}")
    return definitions, arguments


def draw_query(schema, walker, rng):
    roots, weights = zip(*QUERY_ROOTS)
    root = rng.choices(roots, weights)[0]
    field = schema.query_type.fields[root]
    definitions, arguments = variables_of(field)
    call = f"{root}({', '.join(arguments)})" if arguments else root + walker.arguments(field)
    type_ = get_named_type(field.type)
    if isinstance(type_, GraphQLObjectType) and not type_.name.endswith("Connection"):
        # A root object: one to three of its fields, the path naming the operation.
        inner = walker.selection(type_, 0, 40)
        first = re.search(r"(\w+)(\(first: 10\))? \{", inner)
        name = camel(root) + (camel(first.group(1)) if first else "Fields")
    else:
        inner = walker.selection(type_, 0, 40)
        name = camel(root) + ("List" if type_.name.endswith("Connection") else "Lookup")
    head = f"({', '.join(definitions)})" if definitions else ""
    return name, f"query {{name}}{head} {{\n  {call} {{ {inner} }}\n}}\n"


def draw_mutation(schema, walker, rng, taken_fields):
    candidates = [
        (name, field) for name, field in schema.mutation_type.fields.items()
        if field.deprecation_reason is None and list(field.args) == ["input"] and name not in taken_fields
    ]
    name, field = rng.choice(candidates)
    taken_fields.add(name)
    input_type = type_text(field.args["input"].type)
    payload = get_named_type(field.type)
    inner = walker.selection(payload, 1, 20)
    return camel(name), f"mutation {{name}}($input: {input_type}) {{\n  {name}(input: $input) {{ {inner} }}\n}}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--total", type=int, default=200, help="operations in all, the fixtures' and Compared's included")
    parser.add_argument("--mutations", type=int, default=30)
    parser.add_argument("--schema", default=str(ROOT.parent / "shared/corpus/github-schema.graphql"))
    parser.add_argument("--output", default=str(HERE / "Operations"))
    options = parser.parse_args()
    schema = build_ast_schema(parse(pathlib.Path(options.schema).read_text()), assume_valid=True)
    rules = [rule for rule in specified_rules if rule is not NoUnusedFragmentsRule]
    fixed = [path.read_text() for path in sorted(FIXTURES.glob("*.graphql"))]
    fixed += [path.read_text() for path in sorted(pathlib.Path(options.output).glob("*.graphql"))
              if not path.name.startswith("Generated")]
    base = "\n".join(fixed)
    taken = {d.name.value for d in parse(base).definitions if getattr(d, "name", None)}
    options.count = options.total - sum(1 for d in parse(base).definitions if d.kind == "operation_definition")
    print(f"make-operations.py: seed {options.seed}, {options.count} operations, schema {options.schema}")
    taken_fields = set(re.findall(r"^mutation \w+[^{]*\{\s*(\w+)", base, re.MULTILINE))
    rng = random.Random(options.seed)
    walker = Walker(schema, rng)
    groups = {}
    made = 0
    while made < options.count:
        is_mutation = made >= options.count - options.mutations
        name, template = (draw_mutation(schema, walker, rng, taken_fields) if is_mutation
                          else draw_query(schema, walker, rng))
        unique, suffix = name, 2
        while unique in taken:
            unique, suffix = f"{name}{suffix}", suffix + 1
        text = template.replace("{name}", unique)
        if validate(schema, parse(base + "\n" + text), rules):
            continue  # drawn again (the generator has moved on, so the next draw differs)
        taken.add(unique)
        text = print_ast(parse(text)) + "\n"
        group = "Mutations" if is_mutation else camel(re.search(r"\{\n  (\w+)", text).group(1))
        groups.setdefault(group, []).append(text)
        made += 1

    output = pathlib.Path(options.output)
    output.mkdir(parents=True, exist_ok=True)
    for old in output.glob("Generated*.graphql"):
        old.unlink()
    header = (f"# Written by Benchmarks/Codegen/make-operations.py --seed {options.seed} --total {options.total}"
              f" --mutations {options.mutations}; regenerate rather than edit.\n\n")
    for group, texts in sorted(groups.items()):
        (output / f"Generated{group}.graphql").write_text(header + "\n".join(texts))
    print(f"wrote {made} operations in {len(groups)} files to {output}")


if __name__ == "__main__":
    sys.exit(main())
