#define BOOST_TEST_MODULE test_import_document
#include <boost/test/unit_test.hpp>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "admin/import_document.h"
#include "admin/sample_data.h"
#include "domain/history_hash.h"

using namespace connector;
using namespace connector::admin;

namespace {

const std::string& sample() {
  static const std::string kSample = make_sample_document({.history = 20, .seed = 3});
  return kSample;
}

ImportBatch read(const std::string& text) { return read_import_document(text, {}); }

// The ImportError message, or "<no error>".
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "<no error>";
}

// The sample with one change made through rapidjson.
std::string mutated(const std::function<void(rapidjson::Document&)>& change) {
  rapidjson::Document doc;
  doc.Parse(sample().c_str(), sample().size());
  BOOST_TEST_REQUIRE(!doc.HasParseError());
  change(doc);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

void set_string(rapidjson::Document& doc, rapidjson::Value& slot, const std::string& text) {
  slot.SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), doc.GetAllocator());
}

// Every field of a batch as text, so two batches can be compared (and printed) whole.
std::string dump(const domain::DirectionSettings& d) {
  std::ostringstream out;
  out << d.min_deposit_amount << "/" << d.fee_percent_millionths << "/" << d.fee_min_amount << "/"
      << d.auto_confirm_deposit_amount << "/" << d.disabled;
  return out.str();
}

std::string dump(const ImportBatch& b) {
  std::ostringstream out;
  for (const auto& n : b.networks) {
    out << "network " << n.network << " " << n.slug << " " << n.base_chain << " " << n.chain_id
        << " " << n.deposit_factory << " " << n.deposit_init_code_hash << "\n";
  }
  for (const auto& a : b.assets) {
    out << "asset " << a.id << " " << a.slug << " " << a.address << " " << a.name << " " << a.symbol
        << " " << a.decimals << " " << a.asset_type << "\n";
  }
  for (const auto& c : b.connects) out << "connect " << c.slug_a << " " << c.slug_b << "\n";
  for (const auto& p : b.pairs) {
    out << "pair " << p.id << " " << p.asset_a_id << " " << p.asset_b_id << " " << dump(p.a2b)
        << " " << dump(p.b2a) << "\n";
  }
  for (const auto& c : b.chains) {
    out << "chain " << c.slug << " " << connector::domain::status_name(c.status) << " "
        << c.latest_height << " " << c.supply << "\n";
  }
  for (const auto& r : b.history) {
    out << "history " << r.id << " " << r.hash << " " << r.pair_id << " " << r.source_slug << " "
        << r.destination_slug << " " << r.source_deposit_address << " " << r.source_sender << " "
        << r.destination_address << " " << r.source_block_number << " "
        << r.destination_block_number << " " << r.source_block_timestamp << " "
        << r.destination_block_timestamp << " " << r.source_tx_hash << " " << r.destination_tx_hash
        << " " << r.source_tx_index << " " << r.source_asset_id << " " << r.destination_asset_id
        << " " << r.source_amount << " " << r.destination_amount << " " << r.fee << " "
        << connector::domain::status_name(r.status) << " " << r.status_message << "\n";
  }
  for (const auto& d : b.deposit_accounts) {
    out << "deposit " << d.deposit_slug << " " << d.deposit_address << " " << d.recipient_slug
        << " " << d.recipient_address << "\n";
  }
  return out.str();
}

bool is_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_lower_hex(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace

BOOST_AUTO_TEST_CASE(sample_document_yields_every_section) {
  const ImportBatch b = read(sample());
  BOOST_TEST(b.networks.size() == 2u);
  BOOST_TEST(b.assets.size() == 6u);
  BOOST_TEST(b.connects.size() == 1u);  // every pair joins unitcore and unitiot
  BOOST_TEST(b.pairs.size() == 3u);
  BOOST_TEST(b.chains.size() == 2u);
  BOOST_TEST(b.history.size() == 20u);
  BOOST_TEST(!b.deposit_accounts.empty());
  BOOST_TEST(b.deposit_accounts.size() <= 20u);
}

BOOST_AUTO_TEST_CASE(sample_networks_and_connect) {
  const ImportBatch b = read(sample());
  BOOST_REQUIRE(b.networks.size() == 2u);
  BOOST_TEST(b.networks[0].network == "UNITCore");
  BOOST_TEST(b.networks[0].slug == "unitcore");
  BOOST_TEST(b.networks[0].chain_id == 36888u);
  BOOST_TEST(b.networks[0].base_chain == "MainBase");
  BOOST_TEST(b.networks[0].deposit_init_code_hash ==
             "0x21c35dbe1b344a2488cf3321d6ce542f8e9f305544ff09e4993a62319a497c1f");
  BOOST_TEST(b.networks[0].deposit_factory.size() == 42u);
  BOOST_TEST(b.networks[1].network == "UNITIoT");
  BOOST_TEST(b.networks[1].slug == "unitiot");
  BOOST_TEST(b.networks[1].chain_id == 1012u);
  BOOST_TEST(b.networks[1].base_chain == "SideBase");
  BOOST_REQUIRE(b.connects.size() == 1u);
  BOOST_TEST(b.connects[0].slug_a == "unitcore");
  BOOST_TEST(b.connects[0].slug_b == "unitiot");
}

BOOST_AUTO_TEST_CASE(sample_assets) {
  const ImportBatch b = read(sample());
  BOOST_REQUIRE(b.assets.size() == 6u);
  BOOST_TEST(b.assets[0].id == 1u);
  BOOST_TEST(b.assets[0].slug == "unitcore");
  BOOST_TEST(b.assets[0].address == "");
  BOOST_TEST(b.assets[0].asset_type == "Coin");
  BOOST_TEST(b.assets[0].decimals == 18);
  BOOST_TEST(b.assets[2].id == 3u);
  BOOST_TEST(b.assets[2].symbol == "USDT");
  BOOST_TEST(b.assets[2].decimals == 6);
  BOOST_TEST(b.assets[2].asset_type == "ERC-20");
  BOOST_TEST(b.assets[3].slug == "unitiot");
  BOOST_TEST(b.assets[3].asset_type == "NRC-6");
  BOOST_TEST(b.assets[4].decimals == 8);
}

BOOST_AUTO_TEST_CASE(pair_amounts_are_base_units) {
  const ImportBatch b = read(sample());
  BOOST_REQUIRE(b.pairs.size() == 3u);
  const struct {
    std::size_t index;
    std::string a2b, b2a;  // dump() of each direction
  } cases[] = {
      // UNIT, 18 decimals: "1", "10.000000", "0.1", "1000".
      {0, "1000000000000000000/10000000/100000000000000000/1000000000000000000000/0",
       "1000000000000000000/10000000/100000000000000000/1000000000000000000000/0"},
      // USDT, 6 decimals: a2b "1", "10.000000", "0.1", "88.45"; b2a "0.5", "0", "0", "1000", off.
      {1, "1000000/10000000/100000/88450000/0", "500000/0/0/1000000000/1"},
      // WBTC, 8 decimals: "0.001", "25.000000", "0.00001", "2.5".
      {2, "100000/25000000/1000/250000000/0", "100000/0/0/250000000/0"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("pairs[" << c.index << "]") {
      BOOST_TEST(b.pairs[c.index].id == c.index + 1);
      BOOST_TEST(dump(b.pairs[c.index].a2b) == c.a2b);
      BOOST_TEST(dump(b.pairs[c.index].b2a) == c.b2a);
    }
  }
  // The two the brief names, spelled out.
  BOOST_TEST(b.pairs[1].a2b.min_deposit_amount == "1000000");
  BOOST_TEST(b.pairs[1].a2b.fee_percent_millionths == 10000000u);
}

BOOST_AUTO_TEST_CASE(chain_supply_is_base_units_of_the_coin) {
  const ImportBatch b = read(sample());
  BOOST_REQUIRE(b.chains.size() == 2u);
  BOOST_TEST(b.chains[0].slug == "unitcore");
  BOOST_TEST((b.chains[0].status == connector::domain::ChainStatus::kOk));
  BOOST_TEST(b.chains[0].latest_height == 1873221u);
  BOOST_TEST(b.chains[0].supply == "987654321123456789012345678");
  BOOST_TEST(b.chains[1].slug == "unitiot");
  BOOST_TEST((b.chains[1].status == connector::domain::ChainStatus::kSyncing));
  BOOST_TEST(b.chains[1].latest_height == 554120u);
  BOOST_TEST(b.chains[1].supply == "12345000000000000000000");
}

BOOST_AUTO_TEST_CASE(every_history_hash_follows_the_hash_rule) {
  const ImportBatch b = read(sample());
  std::map<std::string, const NetworkRow*> networks;
  for (const auto& n : b.networks) networks[n.slug] = &n;
  BOOST_REQUIRE(b.history.size() == 20u);
  for (std::size_t i = 0; i < b.history.size(); ++i) {
    const HistoryRow& r = b.history[i];
    BOOST_TEST_CONTEXT("history[" << i << "]") {
      BOOST_TEST(r.id == i + 1);
      BOOST_REQUIRE(networks.count(r.source_slug) == 1u);
      const NetworkRow& n = *networks[r.source_slug];
      BOOST_TEST(r.hash ==
                 domain::history_hash(n.network, n.chain_id, r.source_tx_hash, r.source_tx_index));
      BOOST_TEST(r.hash.size() == 64u);
      BOOST_TEST(is_lower_hex(r.hash));
      BOOST_TEST(r.source_tx_hash.size() == 66u);
      BOOST_TEST(is_lower_hex(r.source_tx_hash.substr(2)));
      BOOST_TEST(r.source_slug != r.destination_slug);
      BOOST_TEST(is_digits(r.source_amount));
      BOOST_TEST(is_digits(r.source_block_number));
      BOOST_TEST(is_digits(r.source_block_timestamp));
      if (r.status == connector::domain::HistoryStatus::kConfirmed) {
        BOOST_TEST(is_digits(r.destination_block_number));
        BOOST_TEST(r.destination_tx_hash.size() == 66u);
      } else {
        BOOST_TEST(r.destination_block_number == "");
        BOOST_TEST(r.destination_tx_hash == "");
      }
      if (r.status != connector::domain::HistoryStatus::kDeposit) {
        BOOST_TEST(is_digits(r.fee));
        BOOST_TEST(is_digits(r.destination_amount));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(reading_twice_gives_equal_batches) {
  const std::string first = dump(read(sample()));
  const std::string second = dump(read(sample()));
  BOOST_TEST(first == second);
  // And the dump tells documents apart, so the comparison above means something.
  BOOST_TEST(first != dump(read(make_sample_document({.history = 20, .seed = 4}))));
}

BOOST_AUTO_TEST_CASE(a_bad_entry_names_its_section_index_and_field) {
  using Doc = rapidjson::Document;
  const struct {
    std::string prefix;
    std::function<void(Doc&)> change;
  } cases[] = {
      {"history[3].source_amount: ",
       [](Doc& d) { set_string(d, d["history"][3]["source_amount"], "12abc"); }},
      {"history[3].source_amount: ",
       [](Doc& d) { set_string(d, d["history"][3]["source_amount"], "-1"); }},
      {"networks[1].slug: ", [](Doc& d) { set_string(d, d["networks"][1]["slug"], "unitcore"); }},
      {"networks[0].chain_id: ", [](Doc& d) { set_string(d, d["networks"][0]["chain_id"], "1"); }},
      {"networks[1].network: ",
       [](Doc& d) { set_string(d, d["networks"][1]["network"], "Ethereum"); }},
      {"assets[2].decimals: ", [](Doc& d) { d["assets"][2]["decimals"].SetInt(19); }},
      {"assets[2].decimals: ", [](Doc& d) { d["assets"][2]["decimals"].SetInt(-1); }},
      {"assets[0].slug: ", [](Doc& d) { set_string(d, d["assets"][0]["slug"], "nowhere"); }},
      {"assets[4].asset_type: ",
       [](Doc& d) { set_string(d, d["assets"][4]["asset_type"], "ERC20"); }},
      {"pairs[0].a2b_fee_percent: ",
       [](Doc& d) { set_string(d, d["pairs"][0]["a2b_fee_percent"], "10000.000001"); }},
      {"pairs[1].b2a_disabled: ",
       [](Doc& d) { set_string(d, d["pairs"][1]["b2a_disabled"], "true"); }},
      {"pairs[2].asset_b_id: ", [](Doc& d) { set_string(d, d["pairs"][2]["asset_b_id"], "99"); }},
      {"chains[1].status: ", [](Doc& d) { set_string(d, d["chains"][1]["status"], "ok"); }},
      {"history[5].source_deposit_address: ",
       [](Doc& d) {
         // A well-formed address, but not the one derived for this record's recipient.
         const std::string other = d["history"][5]["destination_address"].GetString();
         set_string(d, d["history"][5]["source_deposit_address"], other);
       }},
      {"history[2].hash: ",
       [](Doc& d) { set_string(d, d["history"][2]["hash"], std::string(64, '0')); }},
      {"history[0].status: ",
       [](Doc& d) { set_string(d, d["history"][0]["status"], "confirmed"); }},
      {"history[1].source_tx_hash: ",
       [](Doc& d) { set_string(d, d["history"][1]["source_tx_hash"], "0x1234"); }},
      {"history[6].pair_id: ", [](Doc& d) { d["history"][6]["pair_id"].SetUint64(99); }},
      {"history[7].source_tx_index: ",
       [](Doc& d) { d["history"][7]["source_tx_index"].SetUint64(4294967296ULL); }},
      {"history[8].source_tx_hash: ",
       [](Doc& d) { d["history"][8].RemoveMember("source_tx_hash"); }},
      {"history[9].id: ",
       [](Doc& d) { set_string(d, d["history"][9]["id"], d["history"][0]["id"].GetString()); }},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.prefix) {
      const std::string message = error_of(mutated(c.change));
      BOOST_TEST(message.starts_with(c.prefix), "message: " << message);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_unmutated_sample_round_trips_through_rapidjson) {
  // The mutation helper alone changes nothing: the failures above come from the change.
  BOOST_TEST(error_of(mutated([](rapidjson::Document&) {})) == "<no error>");
}

BOOST_AUTO_TEST_CASE(a_wrong_hash_message_gives_the_expected_one) {
  const std::string text =
      mutated([](rapidjson::Document& d) { set_string(d, d["history"][2]["hash"], "ab"); });
  const std::string expected = read(sample()).history[2].hash;
  BOOST_TEST(error_of(text) ==
             "history[2].hash: does not follow the hash rule (expected " + expected + ")");
}

BOOST_AUTO_TEST_CASE(a_given_hash_in_upper_case_is_accepted) {
  const ImportBatch original = read(sample());
  const std::string text = mutated([](rapidjson::Document& d) {
    std::string hash = d["history"][2]["hash"].GetString();
    std::transform(hash.begin(), hash.end(), hash.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    set_string(d, d["history"][2]["hash"], hash);
  });
  BOOST_TEST(dump(read(text)) == dump(original));
}

BOOST_AUTO_TEST_CASE(a_missing_hash_is_computed) {
  const ImportBatch original = read(sample());
  const std::string text =
      mutated([](rapidjson::Document& d) { d["history"][4].RemoveMember("hash"); });
  const ImportBatch b = read(text);
  BOOST_REQUIRE(b.history.size() == 20u);
  BOOST_TEST(b.history[4].hash == original.history[4].hash);
}

BOOST_AUTO_TEST_CASE(documents_that_are_not_an_object_are_rejected) {
  const struct {
    std::string text, prefix;
  } cases[] = {
      {"", "not valid JSON"},
      {"not json", "not valid JSON"},
      {"{\"networks\": [", "not valid JSON"},
      {"{\"a\": \"\xff\"}", "not valid JSON"},
      {"[]", "the document must be a JSON object"},
      {"[" + sample() + "]", "the document must be a JSON object"},
      {"\"text\"", "the document must be a JSON object"},
      {"42", "the document must be a JSON object"},
      {"{\"history\": {}}", "history: must be an array"},
      {"{\"networks\": [1]}", "networks[0]: must be an object"},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("'" << c.text.substr(0, 40) << "'") {
      const std::string message = error_of(c.text);
      BOOST_TEST(message.starts_with(c.prefix), "message: " << message);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_empty_object_is_an_empty_batch) {
  const ImportBatch b = read("{}");
  BOOST_TEST(dump(b) == "");
}

BOOST_AUTO_TEST_CASE(history_needs_its_networks_in_the_file_or_the_database) {
  const std::string history_only = mutated([](rapidjson::Document& d) {
    for (const char* name : {"networks", "assets", "pairs", "chains"}) d.RemoveMember(name);
  });
  BOOST_TEST(error_of(history_only).starts_with("history[0].source_slug: "));
}
