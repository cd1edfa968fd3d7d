//! Round budgets: the results of one round of parallel tool calls share
//! one token budget.
//!
//! 1. Each result is sanitized under its own budget; what it then uses is
//!    its *need* (text tokens plus estimated media tokens).
//! 2. Every result is granted `min(need, floor)`, where the floor is the
//!    round's `min-tokens` (at least the pipeline's minimum budget), lowered
//!    to an equal split when the round cannot give everyone that much — so
//!    a result that arrives last never starves to nothing.
//! 3. What is left is shared among the results still short of their need
//!    in proportion to their priorities, water-filling: a result never gets
//!    more than its need, and what it does not take goes to the others.
//! 4. Results granted less than their need are sanitized again under
//!    their grant. Every record states its share.
//!
//! Cost: one pipeline run per result, plus one more per result cut by the
//! round.

use crate::api::{RoundInput, RoundOptions, RoundShare, SanitizeError, Sanitized};
use crate::options::MIN_MAX_TOKENS;
use crate::pack::CompiledPack;
use crate::pipeline::sanitize_visible;
use crate::support::tokenizer::Tokenizer;

/// Grants for `needs` under `round` tokens with weights and a floor.
pub fn allocate(needs: &[u32], weights: &[u32], round: u32, floor: u32) -> Vec<u32> {
    let mut g: Vec<u32> = needs.iter().map(|&n| n.min(floor)).collect();
    let mut remaining = u64::from(round).saturating_sub(g.iter().map(|&x| u64::from(x)).sum());
    loop {
        let active: Vec<usize> = (0..g.len()).filter(|&i| g[i] < needs[i]).collect();
        if active.is_empty() || remaining == 0 {
            return g;
        }
        let w_total: u64 = active.iter().map(|&i| u64::from(weights[i].max(1))).sum();
        let mut given = 0u64;
        for &i in &active {
            let share = remaining * u64::from(weights[i].max(1)) / w_total;
            let add = share.min(u64::from(needs[i] - g[i]));
            g[i] += add as u32;
            given += add;
        }
        if given == 0 {
            // Shares rounded to nothing: hand out single tokens by weight.
            let mut order = active.clone();
            order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
            for i in order {
                if given < remaining && g[i] < needs[i] {
                    g[i] += 1;
                    given += 1;
                }
            }
        }
        remaining -= given;
    }
}

/// Runs one round.
pub fn sanitize_round(
    inputs: &[RoundInput],
    round: &RoundOptions,
    pack: &CompiledPack,
) -> Result<Vec<Result<Sanitized, SanitizeError>>, SanitizeError> {
    let n = inputs.len() as u32;
    if n == 0 {
        return Ok(Vec::new());
    }
    if round.round_tokens < n.saturating_mul(MIN_MAX_TOKENS) {
        return Err(SanitizeError::InvalidOptions(format!(
            "round-tokens {} cannot give {n} results the minimum of {MIN_MAX_TOKENS} tokens each",
            round.round_tokens
        )));
    }
    let floor = round.min_tokens.max(MIN_MAX_TOKENS).min(round.round_tokens / n);
    // 1. Each under its own budget: its need.
    let first: Vec<Result<(Sanitized, String), SanitizeError>> =
        inputs.iter().map(|r| sanitize_visible(&r.input, &r.options, pack)).collect();
    let needs: Vec<u32> = first
        .iter()
        .zip(inputs)
        .map(|(r, i)| match r {
            Ok((s, text)) => {
                let tokens =
                    s.record.output_tokens.unwrap_or_else(|| Tokenizer::get(i.options.encoding).count(text) as u64);
                (tokens + u64::from(s.record.media_tokens)).min(u64::from(u32::MAX)) as u32
            }
            Err(_) => 0,
        })
        .collect();
    let weights: Vec<u32> = inputs.iter().map(|i| i.priority.max(1)).collect();
    let grants = allocate(&needs, &weights, round.round_tokens, floor);
    // 2. Again under the grant where it is short of the need.
    let mut out = Vec::with_capacity(inputs.len());
    for (k, (r, input)) in first.into_iter().zip(inputs).enumerate() {
        let share =
            RoundShare { tokens: grants[k], need: needs[k], round_tokens: round.round_tokens, priority: weights[k] };
        let result = match r {
            Err(e) => Err(e),
            Ok((s, _)) if grants[k] >= needs[k] => Ok(s),
            Ok(_) => {
                let mut o = input.options.clone();
                o.max_tokens = Some(grants[k].max(MIN_MAX_TOKENS));
                sanitize_visible(&input.input, &o, pack).map(|(s, _)| s)
            }
        };
        out.push(result.map(|mut s| {
            s.record.round = Some(share);
            s.message = crate::stages::wrap::set_record(&s.message, input.options.format, &s.record);
            s
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_then_need_then_priority() {
        // Round of 3000: needs 100, 5000, 5000; floor 500.
        let g = allocate(&[100, 5000, 5000], &[1, 1, 3], 3000, 500);
        assert_eq!(g[0], 100, "a small need is met and not more");
        assert!(g[1] >= 500 && g[2] >= 500, "{g:?}");
        assert!(g[2] > g[1], "priority weighs: {g:?}");
        assert_eq!(g.iter().sum::<u32>(), 3000);
        // Everyone fits: everyone gets its need.
        assert_eq!(allocate(&[10, 20], &[1, 1], 1000, 300), vec![10, 20]);
    }
}
