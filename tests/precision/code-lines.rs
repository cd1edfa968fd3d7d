        pub struct_token: Token![struct],
        pub enum_token: Token![enum],
        pub brace_token: token::Brace,
        pub union_token: Token![union],
            if lookahead.peek(Token![struct]) {
                let struct_token = input.parse::<Token![struct]>()?;
            } else if lookahead.peek(Token![enum]) {
                let enum_token = input.parse::<Token![enum]>()?;
            } else if lookahead.peek(Token![union]) {
                let union_token = input.parse::<Token![union]>()?;
        if where_clause.is_none() && lookahead.peek(token::Paren) {
        } else if lookahead.peek(token::Brace) {
        token::Brace,
    ($token:ident) => {
            fn from(token: Token![$token]) -> Ident {
    fn from(token: Token![_]) -> Ident {
    use crate::token::Token;
        let token = &general_purpose::STANDARD.decode(parts.next().unwrap())?;
        let token = &general_purpose::STANDARD.decode(raw)?;
//! # use winnow::token::take_while;
    ///             paren_token: token::Paren::default(),
/// # use winnow::token::take_while;
    assert_tokens(&map, &[Token::Map { len: Some(0) }, Token::MapEnd]);
            Token::Char('a'),
            Token::I32(10),
            Token::Char('c'),
            Token::I32(30),
            Token::Char('b'),
            Token::I32(20),
            Token::MapEnd,
    assert_tokens(&set, &[Token::Seq { len: Some(0) }, Token::SeqEnd]);
            Token::SeqEnd,
    self, deadlock, FilterOp, ParkResult, ParkToken, SpinWait, UnparkResult, UnparkToken,
const TOKEN_SHARED: ParkToken = ParkToken(ONE_READER);
const TOKEN_EXCLUSIVE: ParkToken = ParkToken(WRITER_BIT);
const TOKEN_UPGRADABLE: ParkToken = ParkToken(ONE_READER | UPGRADABLE_BIT);
        let filter = |ParkToken(token)| {
        token: ParkToken,
use crate::token::Token;
    token: Option<Token>,
                TokenKind::Whitespace | TokenKind::LineComment | TokenKind::BlockComment => {
                TokenKind::Whitespace | TokenKind::LineComment | TokenKind::BlockComment
    /// [`Index`]: crate::token::Index
    /// # use wast::token::NameAnnotation;
                kind: TokenKind::Reserved,
                kind: TokenKind::Keyword,
                kind: TokenKind::Integer(_),
    /// [`Token::Keyword`](crate::lexer::Token)
            TokenKind::Keyword => {}
    /// [`Token::Annotation`](crate::lexer::Token)
            TokenKind::Annotation => {}
    /// [`Token::Reserved`](crate::lexer::Token)
            TokenKind::Reserved => {}
    /// [`Token::Integer`](crate::lexer::Token)
            TokenKind::Integer(i) => i,
    /// [`Token::Float`](crate::lexer::Token)
    /// [`Token::String`](crate::lexer::Token)
    /// [`Token::LineComment`](crate::lexer::Token) or a
    /// [`Token::BlockComment`](crate::lexer::Token)
                TokenKind::LineComment | TokenKind::BlockComment => {
    fn advance_past(&mut self, token: &Token) {
            lt_token: Token![<](span),
            gt_token: Token![>](span),
pub const IFLA_INET6_UNSPEC: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_UNSPEC;
pub const IFLA_INET6_FLAGS: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_FLAGS;
pub const IFLA_INET6_CONF: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_CONF;
pub const IFLA_INET6_STATS: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_STATS;
pub const IFLA_INET6_MCAST: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_MCAST;
pub const IFLA_INET6_CACHEINFO: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_CACHEINFO;
pub const IFLA_INET6_ICMP6STATS: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_ICMP6STATS;
pub const IFLA_INET6_TOKEN: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_TOKEN;
pub const IFLA_INET6_ADDR_GEN_MODE: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_ADDR_GEN_MODE;
pub const IFLA_INET6_RA_MTU: _bindgen_ty_7 = _bindgen_ty_7::IFLA_INET6_RA_MTU;
pub const __IFLA_INET6_MAX: _bindgen_ty_7 = _bindgen_ty_7::__IFLA_INET6_MAX;
pub enum _bindgen_ty_7 {
