"""The expected API answers for an import document, computed from the document itself.

The fixture is written in the API's own shapes, so an expected record is the fixture's record
with the asset and chain fields filled in from its assets and networks, in the contract's field
order. Tests compare whole answers (values, JSON types and key order) against these.
"""

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SAMPLE = FIXTURES / "sample-60.json"

HISTORY_FIELDS = [
    "id", "hash", "pair_id",
    "source_slug", "source_network", "source_chain_id", "source_base_chain",
    "destination_slug", "destination_network", "destination_chain_id", "destination_base_chain",
    "source_deposit_address", "source_sender", "destination_address",
    "source_block_number", "destination_block_number",
    "source_block_timestamp", "destination_block_timestamp",
    "source_tx_hash", "destination_tx_hash",
    "source_asset_id", "destination_asset_id",
    "source_asset_address", "destination_asset_address",
    "source_asset_name", "destination_asset_name",
    "source_asset_symbol", "destination_asset_symbol",
    "source_asset_decimals", "destination_asset_decimals",
    "source_asset_type", "destination_asset_type",
    "source_amount", "destination_amount", "fee", "status",
]

DEFAULT_STATUS_MESSAGES = {
    "Deposit": "The deposit was seen on the source chain and awaits confirmation.",
    "Pending": "The deposit is confirmed and the payout on the destination chain is under way.",
    "Confirmed": "The transfer is complete: the payout is confirmed on the destination chain.",
    "Error": "The transfer could not be completed; contact support with this record's hash.",
}


class Fixture:
    def __init__(self, path=SAMPLE):
        self.path = Path(path)
        self.doc = json.loads(self.path.read_text())
        self.networks = {n["slug"]: n for n in self.doc.get("networks", [])}
        self.assets = {str(a["id"]): a for a in self.doc.get("assets", [])}
        self.pairs = {str(p["id"]): p for p in self.doc.get("pairs", [])}
        self.history = self.doc.get("history", [])

    def network(self, slug):
        n = self.networks[slug]
        return {"network": n["network"], "chain_id": str(n["chain_id"]),
                "base_chain": n["base_chain"], "slug": n["slug"]}

    def asset(self, asset_id):
        a = self.assets[str(asset_id)]
        return {"id": str(a["id"]), "asset": a["asset"], "name": a["name"], "symbol": a["symbol"],
                "decimals": a["decimals"], "asset_type": a["asset_type"],
                **self.network(a["slug"])}

    def record(self, r, with_status_message=False):
        """The API's rendering of fixture history record r."""
        out = {"id": str(r["id"]), "hash": r["hash"], "pair_id": int(r["pair_id"])}
        for side in ("source", "destination"):
            n = self.network(r[f"{side}_slug"])
            out.update({f"{side}_slug": n["slug"], f"{side}_network": n["network"],
                        f"{side}_chain_id": n["chain_id"], f"{side}_base_chain": n["base_chain"]})
        for field in ("source_deposit_address", "source_sender", "destination_address",
                      "source_block_number", "destination_block_number",
                      "source_block_timestamp", "destination_block_timestamp",
                      "source_tx_hash", "destination_tx_hash"):
            out[field] = str(r.get(field, ""))
        sa, da = self.assets[str(r["source_asset_id"])], self.assets[str(r["destination_asset_id"])]
        out.update({"source_asset_id": str(sa["id"]), "destination_asset_id": str(da["id"])})
        for field, key in (("address", "asset"), ("name", "name"), ("symbol", "symbol"),
                           ("decimals", "decimals"), ("type", "asset_type")):
            out[f"source_asset_{field}"] = sa[key]
            out[f"destination_asset_{field}"] = da[key]
        ordered = {k: out[k] for k in HISTORY_FIELDS if k in out}
        ordered.update({"source_amount": r["source_amount"],
                        "destination_amount": r.get("destination_amount", ""),
                        "fee": r.get("fee", ""), "status": r["status"]})
        if with_status_message:
            ordered["status_message"] = (r.get("status_message")
                                         or DEFAULT_STATUS_MESSAGES[r["status"]])
        return ordered

    def sample_values(self):
        """Valid values of each parameter kind (the endpoint descriptions' "kind",
        tests/endpoints-dump), on a stack that imported this fixture: a record hash names a record
        that is not final (so its answer has the usual Cache-Control), the address is in EIP-55
        form (required on a main chain), and the slugs are of two connected chains. One place for
        every test that needs a valid value of a kind (valid_params())."""
        record = next(r for r in self.history if r["status"] in ("Deposit", "Pending"))
        return {
            "uint64": ["1"],
            "page_size": ["5"],
            "address": ["0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"],  # EIP-55's own example
            "tx_hash": [record["source_tx_hash"]],
            "record_hash": [record["hash"]],
            "slug": list(self.networks),
            "history_status": [record["status"]],
            "sort_order": ["ASC"],
        }

    def matched_record(self):
        """A record with every filter's field set (a destination transaction too)."""
        return next(r for r in self.history if r.get("destination_tx_hash"))

    def filter_values(self, endpoint, record):
        """{name: value} for every parameter of a described endpoint (tests/endpoints-dump): a
        parameter that filters on a field of fixture record `record` (the field of its name; for
        a chain, `<side>_slug`) takes that field, in the canonical spelling of its kind (what
        nginx caches: hex in lower case), so that each alone matches the record; any other (the
        page's, the order) its kind's first value of sample_values(). A new filter is covered
        here by its name, with no test to edit."""
        samples = self.sample_values()
        values = {}
        for param in endpoint["params"]:
            name, kind = param["name"], param["kind"]
            field = name if name in record else name.replace("_blockchain", "_slug")
            if field not in record:
                values[name] = samples[kind][0]
            elif kind in ("address", "tx_hash", "record_hash"):
                values[name] = str(record[field]).lower()
            else:
                values[name] = str(record[field])
        return values

    def records(self, predicate=lambda r: True, ascending=False):
        chosen = [r for r in self.history if predicate(r)]
        chosen.sort(key=lambda r: int(r["id"]), reverse=not ascending)
        return [self.record(r) for r in chosen]


def valid_params(endpoint, samples, required_only=True):
    """{name: valid value} for the (required) parameters of a described endpoint, from samples
    (Fixture.sample_values()): the i-th parameter of a kind takes the kind's i-th value (cycling),
    so /v1/account's two chains differ. A kind without a sample value fails here, by name."""
    taken = {}
    params = {}
    for param in endpoint["params"]:
        kind = param["kind"]
        if kind not in samples:
            raise AssertionError(f"{endpoint['path']} {param['name']}: no sample value of kind "
                                 f"{kind!r} (tests/integration/fixture.py, sample_values)")
        index = taken.get(kind, 0)
        taken[kind] = index + 1
        if param["required"] or not required_only:
            params[param["name"]] = samples[kind][index % len(samples[kind])]
    return params
