"""Small word lists the offline extractor's rules rely on.

Kept apart from the rules so the rules stay readable: irregular verb forms
(to turn passive facts into active questions and back), the nouns that tell an
entity's type ("a 1997 film" -> WORK), country and US-state names (to ask
"What country is X in?"), pronouns, and the mapping from spaCy's NER labels
to the GSW's coarse entity types.
"""

from __future__ import annotations

# A month name, whole or shortened ("Sept.", "December"), as a regular-expression fragment.
MONTH_PATTERN = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"

# spaCy NER label -> GSW entity type. Labels not listed (ORDINAL) are not entities.
NER_TYPES: dict[str, str] = {
    "PERSON": "PERSON",
    "ORG": "ORG",
    "GPE": "PLACE",
    "LOC": "PLACE",
    "FAC": "PLACE",
    "DATE": "DATE",
    "TIME": "DATE",
    "CARDINAL": "NUMBER",
    "QUANTITY": "NUMBER",
    "MONEY": "NUMBER",
    "PERCENT": "NUMBER",
    "WORK_OF_ART": "WORK",
    "EVENT": "EVENT",
    "NORP": "NORP",
    "LAW": "LAW",
    "LANGUAGE": "LANGUAGE",
    "PRODUCT": "PRODUCT",
}

PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
THING_PRONOUNS = frozenset({"it", "its", "itself"})
GROUP_PRONOUNS = frozenset({"they", "them", "their", "theirs"})
RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that", "whose"})

# Preposition a "Where"/"When" question absorbs ("Where was X born?", not "... born in?").
ABSORBED_PREPS = frozenset({"in", "at", "on", "near", "inside", "within", "during", "around", "into"})

# Past participle -> simple past, for irregular verbs (regular ones share the -ed form).
_IRREGULAR = {
    "arisen": "arose",
    "awoken": "awoke",
    "beaten": "beat",
    "become": "became",
    "begun": "began",
    "bitten": "bit",
    "blown": "blew",
    "broken": "broke",
    "chosen": "chose",
    "come": "came",
    "done": "did",
    "drawn": "drew",
    "driven": "drove",
    "eaten": "ate",
    "fallen": "fell",
    "flown": "flew",
    "forbidden": "forbade",
    "forgotten": "forgot",
    "forgiven": "forgave",
    "frozen": "froze",
    "given": "gave",
    "gone": "went",
    "grown": "grew",
    "hidden": "hid",
    "known": "knew",
    "overtaken": "overtook",
    "ridden": "rode",
    "risen": "rose",
    "run": "ran",
    "seen": "saw",
    "shaken": "shook",
    "shown": "showed",
    "sung": "sang",
    "spoken": "spoke",
    "stolen": "stole",
    "sworn": "swore",
    "taken": "took",
    "thrown": "threw",
    "undertaken": "undertook",
    "withdrawn": "withdrew",
    "woken": "woke",
    "worn": "wore",
    "written": "wrote",
    "rewritten": "rewrote",
    "undergone": "underwent",
    "overseen": "oversaw",
}
_IRREGULAR_BACK = {v: k for k, v in _IRREGULAR.items()}


# Base form -> simple past, for irregular verbs: a question that turns a gerund or participle into
# a past tense ("becoming the first ..." -> "Who became ...?") had "becomed", "wined", "taked".
_PAST_OF_BASE = dict(
    pair.split(":")
    for pair in (
        "arise:arose awake:awoke be:was bear:bore beat:beat become:became begin:began bend:bent "
        "bind:bound bite:bit blow:blew break:broke bring:brought build:built buy:bought catch:caught "
        "choose:chose come:came cut:cut deal:dealt dig:dug do:did draw:drew drink:drank drive:drove "
        "eat:ate fall:fell feed:fed feel:felt fight:fought find:found flee:fled fly:flew forbid:forbade "
        "forget:forgot forgive:forgave freeze:froze get:got give:gave go:went grow:grew hang:hung "
        "have:had hear:heard hide:hid hit:hit hold:held keep:kept know:knew lay:laid lead:led "
        "leave:left lend:lent let:let lie:lay light:lit lose:lost make:made mean:meant meet:met "
        "oversee:oversaw overtake:overtook pay:paid put:put quit:quit read:read rewrite:rewrote "
        "ride:rode ring:rang rise:rose run:ran say:said see:saw seek:sought sell:sold send:sent "
        "set:set shake:shook shoot:shot show:showed shut:shut sing:sang sink:sank sit:sat sleep:slept "
        "speak:spoke spend:spent spin:spun split:split spread:spread spring:sprang stand:stood "
        "steal:stole stick:stuck strike:struck swear:swore sweep:swept swim:swam swing:swung "
        "take:took teach:taught tear:tore tell:told think:thought throw:threw undergo:underwent "
        "understand:understood undertake:undertook wake:woke wear:wore win:won wind:wound "
        "withdraw:withdrew write:wrote"
    ).split()
)


def simple_past(base: str) -> str:
    """``win`` -> ``won``, ``move`` -> ``moved``, ``play`` -> ``played``: the simple past of a verb's
    base form."""
    irregular = _PAST_OF_BASE.get(base.lower())
    if irregular is not None:
        return irregular
    return base + ("d" if base.endswith("e") else "ed")


def past_of_participle(participle: str) -> str:
    """``written`` -> ``wrote``; regular verbs are returned unchanged."""
    return _IRREGULAR.get(participle.lower(), participle)


def participle_of_past(past: str) -> str:
    """``wrote`` -> ``written``; regular verbs are returned unchanged."""
    return _IRREGULAR_BACK.get(past.lower(), past)


# Head nouns of descriptions ("X is a 1997 film") that reveal the entity type.
NOUN_TYPES: dict[str, str] = {}
for _t, _words in {
    "WORK": "film movie song single album book novel poem play opera ballet series show episode painting "
    "sculpture journal magazine newspaper game videogame soundtrack documentary sitcom drama comedy "
    "musical symphony composition ep anthology comic manga anime",
    "PLACE": "city town village river lake mountain island country state province county district "
    "municipality region capital suburb neighbourhood neighborhood community borough parish valley "
    "waterfall peninsula bay sea ocean desert forest park hamlet settlement commune prefecture "
    "airport station building bridge church cathedral castle stadium street road highway tributary "
    "canton territory locality area department",
    "ORG": "company corporation band group team club university college school party organization "
    "organisation association agency firm label network brand chain manufacturer publisher "
    "studio federation league society institute ministry council army",
    "PERSON": "actor actress singer songwriter musician composer writer author poet novelist director "
    "producer politician footballer player painter artist king queen prince princess emperor "
    "bishop saint priest lawyer judge scientist physicist chemist mathematician philosopher "
    "journalist businessman businesswoman entrepreneur rapper drummer guitarist pianist "
    "conductor dancer model cricketer athlete boxer wrestler coach general officer soldier "
    "diplomat economist historian architect engineer inventor explorer monk nun pope duke "
    "duchess count countess earl baron lord lady knight chancellor president minister "
    "governor senator mayor comedian screenwriter cinematographer editor presenter designer "
    "photographer sculptor illustrator cartoonist astronaut pilot swimmer cyclist sprinter "
    "golfer jockey daughter son wife husband mother father brother sister representative delegate "
    "chairman chairwoman secretary commissioner ambassador congressman congresswoman treasurer",
}.items():
    for _w in _words.split():
        NOUN_TYPES[_w] = _t

# Nouns by which an article refers back to its abstract topic ("The concept was developed by ...").
ABSTRACT_NOUNS = frozenset(
    "concept idea theory term policy doctrine law act treaty agreement practice method technique process "
    "phenomenon movement style genre tradition project programme program system scheme plan event "
    "festival tournament competition championship race award prize species genus disease condition "
    "dish word phrase name language dialect religion sport game structure building".split()
)

COUNTRIES = frozenset(
    x.lower()
    for x in """Afghanistan|Albania|Algeria|Andorra|Angola|Argentina|Armenia|Australia|Austria|Azerbaijan|
Bahamas|Bahrain|Bangladesh|Barbados|Belarus|Belgium|Belize|Benin|Bhutan|Bolivia|Bosnia and Herzegovina|
Botswana|Brazil|Brunei|Bulgaria|Burkina Faso|Burundi|Cambodia|Cameroon|Canada|Cape Verde|Chad|Chile|China|
Colombia|Comoros|Congo|Costa Rica|Croatia|Cuba|Cyprus|Czech Republic|Czechia|Denmark|Djibouti|Dominica|
Dominican Republic|East Timor|Ecuador|Egypt|El Salvador|England|Equatorial Guinea|Eritrea|Estonia|Eswatini|
Ethiopia|Fiji|Finland|France|Gabon|Gambia|Georgia|Germany|Ghana|Greece|Grenada|Guatemala|Guinea|Guyana|
Haiti|Honduras|Hungary|Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Ivory Coast|Jamaica|Japan|
Jordan|Kazakhstan|Kenya|Kiribati|Kosovo|Kuwait|Kyrgyzstan|Laos|Latvia|Lebanon|Lesotho|Liberia|Libya|
Liechtenstein|Lithuania|Luxembourg|Madagascar|Malawi|Malaysia|Maldives|Mali|Malta|Mauritania|Mauritius|
Mexico|Micronesia|Moldova|Monaco|Mongolia|Montenegro|Morocco|Mozambique|Myanmar|Burma|Namibia|Nauru|Nepal|
Netherlands|New Zealand|Nicaragua|Niger|Nigeria|North Korea|North Macedonia|Norway|Oman|Pakistan|Palau|
Palestine|Panama|Papua New Guinea|Paraguay|Peru|Philippines|Poland|Portugal|Qatar|Romania|Russia|Rwanda|
Samoa|San Marino|Saudi Arabia|Scotland|Senegal|Serbia|Seychelles|Sierra Leone|Singapore|Slovakia|Slovenia|
Solomon Islands|Somalia|South Africa|South Korea|South Sudan|Spain|Sri Lanka|Sudan|Suriname|Sweden|
Switzerland|Syria|Taiwan|Tajikistan|Tanzania|Thailand|Togo|Tonga|Trinidad and Tobago|Tunisia|Turkey|
Turkmenistan|Tuvalu|Uganda|Ukraine|United Arab Emirates|United Kingdom|UK|United States|USA|U.S.|
United States of America|Uruguay|Uzbekistan|Vanuatu|Vatican City|Venezuela|Vietnam|Wales|Yemen|Zambia|
Zimbabwe|Soviet Union|USSR|Yugoslavia|Czechoslovakia|Prussia|Hong Kong|Puerto Rico|Northern Ireland|
Great Britain|Britain|Korea|West Germany|East Germany|Ottoman Empire|Holy Roman Empire""".replace(
        "\n", ""
    ).split("|")
)

US_STATES = frozenset(
    x.lower()
    for x in """Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|
Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|
Minnesota|Mississippi|Missouri|Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|
North Carolina|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|
Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia|Wisconsin|Wyoming""".replace("\n", "").split(
        "|"
    )
)


def place_kind(name: str) -> str | None:
    """``country`` or ``state`` for a known country / US state name, else None."""
    low = name.lower().removeprefix("the ")
    if low in COUNTRIES:
        return "country"
    if low in US_STATES:
        return "state"
    if low.endswith(" county"):
        return "county"
    return None


_DEMONYMS = {
    "afghan": "Afghanistan", "albanian": "Albania", "algerian": "Algeria", "american": "United States",
    "argentine": "Argentina", "argentinian": "Argentina", "armenian": "Armenia", "australian": "Australia",
    "austrian": "Austria", "azerbaijani": "Azerbaijan", "bangladeshi": "Bangladesh", "belarusian": "Belarus",
    "belgian": "Belgium", "bolivian": "Bolivia", "bosnian": "Bosnia and Herzegovina", "brazilian": "Brazil",
    "british": "United Kingdom", "bulgarian": "Bulgaria", "cambodian": "Cambodia", "cameroonian": "Cameroon",
    "canadian": "Canada", "chilean": "Chile", "chinese": "China", "colombian": "Colombia",
    "croatian": "Croatia", "cuban": "Cuba", "cypriot": "Cyprus", "czech": "Czech Republic", "danish": "Denmark",
    "dutch": "Netherlands", "ecuadorian": "Ecuador", "egyptian": "Egypt", "english": "England",
    "estonian": "Estonia", "ethiopian": "Ethiopia", "filipino": "Philippines", "finnish": "Finland",
    "french": "France", "georgian": "Georgia", "german": "Germany", "ghanaian": "Ghana", "greek": "Greece",
    "guatemalan": "Guatemala", "haitian": "Haiti", "hungarian": "Hungary", "icelandic": "Iceland",
    "indian": "India", "indonesian": "Indonesia", "iranian": "Iran", "persian": "Iran", "iraqi": "Iraq",
    "irish": "Ireland", "israeli": "Israel", "italian": "Italy", "jamaican": "Jamaica", "japanese": "Japan",
    "jordanian": "Jordan", "kazakh": "Kazakhstan", "kenyan": "Kenya", "korean": "Korea",
    "south korean": "South Korea", "north korean": "North Korea", "latvian": "Latvia", "lebanese": "Lebanon",
    "libyan": "Libya", "lithuanian": "Lithuania", "luxembourgish": "Luxembourg", "malaysian": "Malaysia",
    "maltese": "Malta", "mexican": "Mexico", "moldovan": "Moldova", "mongolian": "Mongolia",
    "montenegrin": "Montenegro", "moroccan": "Morocco", "nepalese": "Nepal", "nepali": "Nepal",
    "new zealand": "New Zealand", "nicaraguan": "Nicaragua", "nigerian": "Nigeria", "norwegian": "Norway",
    "pakistani": "Pakistan", "palestinian": "Palestine", "panamanian": "Panama", "paraguayan": "Paraguay",
    "peruvian": "Peru", "polish": "Poland", "portuguese": "Portugal", "romanian": "Romania",
    "russian": "Russia", "saudi": "Saudi Arabia", "scottish": "Scotland", "senegalese": "Senegal",
    "serbian": "Serbia", "singaporean": "Singapore", "slovak": "Slovakia", "slovenian": "Slovenia",
    "south african": "South Africa", "soviet": "Soviet Union", "spanish": "Spain", "sri lankan": "Sri Lanka",
    "sudanese": "Sudan", "swedish": "Sweden", "swiss": "Switzerland", "syrian": "Syria", "taiwanese": "Taiwan",
    "tanzanian": "Tanzania", "thai": "Thailand", "tunisian": "Tunisia", "turkish": "Turkey",
    "ugandan": "Uganda", "ukrainian": "Ukraine", "uruguayan": "Uruguay", "uzbek": "Uzbekistan",
    "venezuelan": "Venezuela", "vietnamese": "Vietnam", "welsh": "Wales", "yemeni": "Yemen",
    "yugoslav": "Yugoslavia", "zambian": "Zambia", "zimbabwean": "Zimbabwe", "prussian": "Prussia",
    "bavarian": "Bavaria", "ottoman": "Ottoman Empire", "byzantine": "Byzantine Empire",
    "roman": "Roman Empire", "puerto rican": "Puerto Rico", "northern irish": "Northern Ireland",
    "hong kong": "Hong Kong", "qatari": "Qatar", "emirati": "United Arab Emirates", "kuwaiti": "Kuwait",
    "burmese": "Myanmar", "macedonian": "North Macedonia", "bengali": "Bangladesh",
    "costa rican": "Costa Rica", "dominican": "Dominican Republic", "salvadoran": "El Salvador",
    "honduran": "Honduras", "trinidadian": "Trinidad and Tobago", "fijian": "Fiji", "samoan": "Samoa",
    "tongan": "Tonga", "angolan": "Angola", "mozambican": "Mozambique", "namibian": "Namibia",
    "botswanan": "Botswana", "malawian": "Malawi", "rwandan": "Rwanda", "somali": "Somalia",
    "eritrean": "Eritrea", "malian": "Mali", "ivorian": "Ivory Coast", "beninese": "Benin", "togolese": "Togo",
    "liberian": "Liberia", "gambian": "Gambia", "mauritanian": "Mauritania", "nigerien": "Niger",
    "chadian": "Chad", "congolese": "Congo", "gabonese": "Gabon", "malagasy": "Madagascar",
    "bahraini": "Bahrain", "omani": "Oman", "laotian": "Laos", "tibetan": "Tibet", "kyrgyz": "Kyrgyzstan",
    "tajik": "Tajikistan", "turkmen": "Turkmenistan", "flemish": "Belgium", "catalan": "Spain",
    "saudi arabian": "Saudi Arabia", "new zealander": "New Zealand", "kosovar": "Kosovo", "luxembourger": "Luxembourg",
    "herzegovinian": "Bosnia and Herzegovina", "belizean": "Belize",
    "bahamian": "Bahamas", "barbadian": "Barbados", "guyanese": "Guyana", "surinamese": "Suriname",
    "sierra leonean": "Sierra Leone", "zairean": "Congo", "cape verdean": "Cape Verde",
}  # fmt: skip


def country_of_demonym(word: str) -> str | None:
    """``Swedish`` -> ``Sweden``; None for groups that are not a country's people."""
    return _DEMONYMS.get(word.lower().strip())


# A political party named by its adjective ("served as a Democrat"): a model names the party.
_PARTIES = {
    "democrat": "Democratic Party", "democratic": "Democratic Party", "democrats": "Democratic Party",
    "republican": "Republican Party", "republicans": "Republican Party",
    "whig": "Whig Party", "whigs": "Whig Party", "federalist": "Federalist Party",
    "labour": "Labour Party", "conservative": "Conservative Party", "conservatives": "Conservative Party",
    "liberal democrat": "Liberal Democrats", "libertarian": "Libertarian Party",
}  # fmt: skip


def party_of_adjective(word: str) -> str | None:
    """``Democrat`` -> ``Democratic Party``; None for words that name no party."""
    return _PARTIES.get(word.lower().strip())


# Last words of an article title on one aspect of its topic ("Climate of Oslo", "Alcohol laws of Utah").
ASPECT_NOUNS = frozenset(
    "climate geography history economy demographics demography culture politics law laws education "
    "transport transportation religion sport sports music cuisine government flora fauna tourism "
    "architecture media healthcare wildlife geology topography administration".split()
)

# Kinds of place whose name an "of" phrase gives ("the city of Wichita", "the U.S. state of Kansas"):
# the noun only introduces the name, so the name is the object and the noun the kind a question asks for.
NAMING_PLACE_NOUNS = frozenset(
    "city town village state province county island region kingdom republic country borough "
    "municipality territory district parish commune hamlet settlement prefecture canton emirate "
    "duchy principality".split()
)

# Compass directions as the parser tags them in "north of X" (an adverb with an "of" phrase).
DIRECTIONS = frozenset(
    "north south east west northeast northwest southeast southwest north-east north-west south-east "
    "south-west northeastern northwestern southeastern southwestern".split()
)

# Nouns naming a measured attribute of a thing ("The population was 12,741", "The highest recorded
# temperature is 113 °F"): a bare number after them is that attribute's value.
MEASURE_NOUNS = frozenset(
    "population temperature precipitation rainfall snowfall humidity elevation altitude height length "
    "width depth area size distance diameter circumference prominence capacity attendance age weight "
    "mass speed density volume discharge".split()
)

# Words of a measured amount after its number ("218 miles", "113 °F", "5.2 square miles", "12 %").
MEASURE_UNITS = frozenset(
    "m metre metres meter meters km kilometre kilometres kilometer kilometers km2 km² mi mi2 mi² mile miles "
    "ft foot feet inch inches mm millimetre millimetres millimeter millimeters cm centimetre centimetres "
    "centimeter centimeters sq square cubic acre acres hectare hectares ha % percent ° °c °f "
    "kg kilogram kilograms tonne tonnes ton tons lb lbs pound pounds mph knots year years minute minutes hour hours "
    "million billion thousand".split()
)
# Amount words before a number that a reader (and a model) keeps with it: "about 630 millimetres".
APPROXIMATORS = frozenset(
    "about around approximately nearly almost roughly over under some only just".split()
)
# Adjectives of size after an amount, with the attribute each measures: "218 miles long".
DIMENSIONS = {"long": "length", "tall": "height", "high": "height", "wide": "width", "deep": "depth"}

# Lowercase generic nouns of the land and water that close a place's name after a proper noun ("the
# Tarn mountains", "Velm district"): the name with its generic noun is the place a model names.
FEATURE_NOUNS = frozenset(
    "mountain mountains range peninsula coast coastline desert district river lake island islands valley "
    "basin watershed plateau plain plains gulf bay strait channel glacier forest canyon highlands "
    "lowlands delta archipelago lagoon estuary".split()
)

#: The parts of a work credited to someone ("music composed by X", "sets designed by Y"): with no
#: owner written, they are the article's work's. One word each: they are matched against a token.
CREDIT_NOUNS = frozenset(
    {"music", "score", "soundtrack", "lyrics", "screenplay", "script", "sets", "costumes", "cinematography",
     "choreography", "songs", "dialogues", "dialogue", "story", "editing", "photography"}
)  # fmt: skip

# Head nouns of athletics and other sporting events ("the long jump", "the men's high jump", "individual
# jumping"): the phrase a person competes in is an entity a model names, though no proper noun.
SPORT_EVENT_HEADS = frozenset(
    "jump jumping vault put throw decathlon heptathlon pentathlon hurdles steeplechase sprint sprinting "
    "walk dressage eventing".split()
)

# Months and seasons: a subject named the hottest (wettest, ...) month or season of its place.
MONTHS_AND_SEASONS = frozenset(
    "january february march april may june july august september october november december "
    "spring summer autumn fall winter".split()
)
