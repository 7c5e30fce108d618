//! Tab completion: meta-commands at the start of an input, file names after
//! `:load` and `:trace`, otherwise keywords, clause names, builtins,
//! stdlib constants (`f32::MAX`), variables and declared functions.

/// What can be completed, refreshed before each line is read.
#[derive(Default, Clone)]
pub struct Names {
    /// Builtin functions and `owner::NAME` constants.
    pub builtins: Vec<String>,
    /// Variables and declared functions and constants of the session.
    pub session: Vec<String>,
}

/// What to complete at byte `pos` of `line`, the current line of an input
/// whose earlier lines are `before`: the start of the word and the sorted,
/// deduplicated candidates. `None` means "complete a file name".
pub fn complete(
    before: &str,
    line: &str,
    pos: usize,
    names: &Names,
) -> Option<(usize, Vec<String>)> {
    let pos = floor_char_boundary(line, pos);
    let head = &line[..pos];
    let start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .last()
        .map_or(pos, |(i, _)| i);
    let word = &head[start..];
    let at_line_start = before.is_empty() && head[..start].trim().is_empty();
    if before.is_empty() && head.trim_start().starts_with(':') {
        if at_line_start {
            let mut v: Vec<String> = super::commands::COMMANDS
                .iter()
                .map(|c| c.name.to_string())
                .filter(|n| n.starts_with(word))
                .collect();
            v.sort();
            return Some((start, v));
        }
        let cmd = head.split_whitespace().next().unwrap_or("");
        if matches!(cmd, ":load" | ":trace") {
            return None;
        }
    }
    if word.is_empty() {
        return Some((pos, Vec::new()));
    }
    let mut v: Vec<String> = lang::token::Tok::KEYWORDS
        .iter()
        .copied()
        .chain(lang::check::clause_names())
        .map(|s| s.to_string())
        .chain(names.builtins.iter().cloned())
        .chain(names.session.iter().cloned())
        .filter(|n| n.starts_with(word) && n != word)
        .collect();
    v.sort();
    v.dedup();
    Some((start, v))
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            builtins: vec!["zeros".into(), "sqrt".into(), "f32::MAX".into()],
            session: vec!["alpha".into(), "zeta".into()],
        }
    }

    #[test]
    fn words() {
        let n = names();
        assert_eq!(
            complete("", "let b = ze", 10, &n),
            Some((8, vec!["zeros".into(), "zeta".into()]))
        );
        assert_eq!(
            complete("", "paral", 5, &n),
            Some((0, vec!["parallel".into()]))
        );
        assert_eq!(
            complete("", "data copyi", 10, &n),
            Some((5, vec!["copyin".into()]))
        );
        assert_eq!(
            complete("", "x = f32::M", 10, &n),
            Some((4, vec!["f32::MAX".into()]))
        );
        // Earlier lines do not make a `:` line a meta-command.
        assert_eq!(complete("{", "al", 2, &n), Some((0, vec!["alpha".into()])));
        assert_eq!(complete("", "", 0, &n), Some((0, vec![])));
    }

    #[test]
    fn meta_commands() {
        let n = names();
        let (s, v) = complete("", ":t", 2, &n).unwrap();
        assert_eq!(s, 0);
        assert_eq!(v, [":time", ":trace", ":type"]);
        assert_eq!(
            complete("", ":type alp", 9, &n),
            Some((6, vec!["alpha".into()]))
        );
        assert_eq!(complete("", ":load ex", 8, &n), None);
    }

    #[test]
    fn odd_positions_do_not_panic() {
        let n = names();
        for (l, p) in [("é", 1), ("abc", 99), ("::::", 2), ("漢字", 4)] {
            let _ = complete("", l, p, &n);
        }
    }
}
