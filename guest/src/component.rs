//! The component glue: exports backed by the pipeline, rules backed by the
//! imported `rule-pack` interface. Nothing else lives here.

use std::sync::OnceLock;

use crate::api::{
    Budget, Guest, Options, RedactRequest, RedactResponse, RoundInput, RoundOptions, SanitizeError, Sanitized,
};
use crate::pack::{CompiledPack, RuleSource};
use crate::pack_api::{self, Finding, PackInfo, RuleSet};

/// The imported pack, as a [`RuleSource`].
struct ImportedPack;

impl RuleSource for ImportedPack {
    fn info(&self) -> PackInfo {
        pack_api::info()
    }
    fn rules(&self) -> RuleSet {
        pack_api::rules()
    }
    fn has_detect(&self) -> bool {
        pack_api::has_detect()
    }
    fn detect(&self, text: &str) -> Vec<Finding> {
        pack_api::detect(text)
    }
}

/// Compiled once per instance; an instance serves one pack.
fn pack() -> Result<&'static CompiledPack, SanitizeError> {
    static PACK: OnceLock<Result<CompiledPack, SanitizeError>> = OnceLock::new();
    PACK.get_or_init(|| CompiledPack::new(Box::new(ImportedPack))).as_ref().map_err(Clone::clone)
}

struct Component;

impl Guest for Component {
    fn sanitize(input: Vec<u8>, options: Options) -> Result<Sanitized, SanitizeError> {
        crate::pipeline::sanitize(&input, &options, pack()?)
    }

    fn sanitize_round(
        inputs: Vec<RoundInput>,
        round: RoundOptions,
    ) -> Result<Vec<Result<Sanitized, SanitizeError>>, SanitizeError> {
        crate::round::sanitize_round(&inputs, &round, pack()?)
    }

    fn sanitize_json(request: String) -> String {
        match pack() {
            Ok(p) => crate::json_twin::sanitize_json(&request, p),
            Err(e) => serde_json::to_string(&Err::<(), _>(e)).expect("serializes"),
        }
    }

    fn effective_budget_json(options: String) -> String {
        match pack() {
            Ok(p) => crate::json_twin::effective_budget_json(&options, p),
            Err(e) => serde_json::to_string(&Err::<(), _>(e)).expect("serializes"),
        }
    }

    fn effective_budget(options: Options) -> Result<Budget, SanitizeError> {
        crate::options::resolve(&options, &pack()?.rules)
    }

    fn redact(request: RedactRequest) -> Result<RedactResponse, SanitizeError> {
        crate::stream::step(&request, pack()?)
    }
}

crate::export!(Component with_types_in crate);

/// Build-time pre-initialisation (wizer, run by `xtask`): builds the
/// o200k tokenizer tables, which the build then snapshots into the
/// component's memory image, so that a fresh instance starts with them
/// instead of spending ~100 ms building them on its first count. The
/// export is removed from the snapshot.
#[export_name = "wizer-initialize"]
pub extern "C" fn wizer_initialize() {
    crate::tokenizer::Tokenizer::get(crate::api::Encoding::O200kBase).warm();
}
