/**
 * The HogQL function catalogue (transcribed from reference/hogql_functions.md): HogQL name → ClickHouse name,
 * argument counts and flags. Entry syntax: `name[>chName]:min:max[:flag…]`, `*` = unlimited,
 * flags: `ci` case-insensitive lookup, `tz` team timezone appended when the caller left the last argument out,
 * `p=a-b` parameter count for parametric aggregates, `wg` the call needs `WITHIN GROUP (ORDER BY …)`. A chName
 * starting with `@` is printed by a special rule.
 */
import { HogQLValidationError } from './errors.js'

export interface FunctionMeta {
  name: string
  ch: string
  min: number
  max: number
  ci?: boolean
  tz?: boolean
  aggregate?: boolean
  minParams?: number
  maxParams?: number
  /** an ordered-set aggregate (`percentile_cont(0.5) WITHIN GROUP (ORDER BY x)`) */
  withinGroup?: boolean
}

const SCALARS = `
plus:2:2 minus:2:2 multiply:2:2 divide:2:2 intDiv:2:2 intDivOrZero:2:2 modulo:2:2 moduloOrZero:2:2
positiveModulo:2:2 negate:1:1 abs:1:1:ci gcd:2:2 lcm:2:2 max2:2:2:ci min2:2:2:ci multiplyDecimal:2:3 divideDecimal:2:3
empty:1:1 notEmpty:1:1 isEmpty>empty:1:1 isNotEmpty>notEmpty:1:1 length:1:1:ci reverse:1:1:ci
array:0:* range:1:3 arrayConcat:2:* arrayElement:2:2 has:2:2 hasAll:2:2 hasAny:2:2 hasSubstr:2:2 indexOf:2:2
arrayCount:1:* countEqual:2:2 arrayEnumerate:1:1 arrayEnumerateUniq:2:* arrayPopBack:1:1 arrayPopFront:1:1
arrayPushBack:2:2 arrayPushFront:2:2 arrayResize:2:3 arraySlice:2:3 arraySort:1:* arrayReverseSort:1:* arrayUniq:1:*
arrayJoin:1:1 arrayDifference:1:1 arrayDistinct:1:1 arrayEnumerateDense:1:1 arrayIntersect:1:* arrayReduce:2:*
arrayReverse:1:1 arrayFilter:2:* arrayFlatten:1:1 arrayCompact:1:1 arrayZip:2:* arrayAUC:2:2 arrayMap:2:* arrayFill:2:*
arrayFold:3:* arrayWithConstant:2:2 arraySplit:2:* arrayReverseFill:2:* arrayReverseSplit:2:* arrayRotateLeft:2:2
arrayRotateRight:2:2 arrayExists:1:* arrayAll:1:* arrayFirst:2:* arrayLast:2:* arrayFirstIndex:2:* arrayLastIndex:2:*
arrayMin:1:2 arrayMax:1:2 arraySum:1:2 arrayAvg:1:2 arrayCumSum:1:* arrayCumSumNonNegative:1:* arrayProduct:1:1
arrayStringConcat:1:2 generateSeries>generate_series:3:3
hex:1:1 unhex:1:1 reinterpretAsUInt8:1:1 reinterpretAsUInt16:1:1 reinterpretAsUInt32:1:1 reinterpretAsUInt64:1:1
reinterpretAsUInt128:1:1 reinterpretAsUInt256:1:1 reinterpretAsInt8:1:1 reinterpretAsInt16:1:1 reinterpretAsInt32:1:1
reinterpretAsInt64:1:1 reinterpretAsInt128:1:1 reinterpretAsInt256:1:1 reinterpretAsFloat32:1:1 reinterpretAsFloat64:1:1
reinterpretAsUUID:1:1 toInt>@cast_Int64:1:1 toIntOrZero>toInt64OrZero:1:1 _toInt8>toInt8:1:1 _toInt16>toInt16:1:1
_toInt32>toInt32:1:1 _toInt64>toInt64:1:1 _toUInt64>toUInt64:1:1 _toUInt128>toUInt128:1:1 toFloat>@cast_Float64:1:1
toFloatOrZero>toFloat64OrZero:1:1 toFloatOrDefault>toFloat64OrDefault:1:2 toDecimal>@toDecimal:2:2 _toDate>toDate:1:1
toUUID>@cast_UUID:1:1 toUUIDOrDefault:2:2 toString:1:2 toNullableString>@cast_Nullable(String):1:1 toBool:1:1
_toNullableBool>@cast_Bool:1:1 toJSONString:1:1 parseDateTime>parseDateTimeOrNull:2:3:tz
parseDateTimeBestEffort>@parseBestEffort:1:2 toTypeName:1:1 cityHash64:1:1 UUIDv7ToDateTime:1:1:tz
toDate>@toDate:1:1 to_date>@toDate:1:1 toDateTime>@toDateTime:1:2:tz toDateTime64>@toDateTime64:1:3
toDateTimeUS>@parseBestEffortUS:1:2
isnull>isNull:1:1:ci isNotNull:1:1 coalesce:1:*:ci ifnull>ifNull:2:2:ci nullif>nullIf:2:2:ci assumeNotNull:1:1
toNullable:1:1
timeZoneOf:1:1 timeZoneOffset:1:1 toYear:1:1 toQuarter:1:1 toMonth:1:1 toDayOfYear:1:1 toDayOfMonth:1:1
toDayOfWeek:1:3 toHour:1:1 toMinute:1:1 toSecond:1:1 toUnixTimestamp:1:2 toUnixTimestamp64Milli:1:1
fromUnixTimestamp64Milli:1:1 toStartOfInterval:2:3 toStartOfYear:1:1 toStartOfISOYear:1:1 toStartOfQuarter:1:1
toStartOfMonth:1:1 toLastDayOfMonth:1:1 toMonday:1:1 toStartOfWeek>@week:1:2 toStartOfDay:1:2 toLastDayOfWeek>@week:1:2
toStartOfHour:1:1 toStartOfMinute:1:1 toStartOfSecond:1:1 toStartOfFiveMinutes:1:1 toStartOfTenMinutes:1:1
toStartOfFifteenMinutes:1:1 toTime:1:1 toISOYear:1:1 toISOWeek:1:1 toWeek:1:3 toYearWeek:1:3 age:3:3 dateAdd:2:3
dateSub:2:3 date_bin>@date_bin:3:3 date_add:2:2 date_subtract>date_sub:2:2 date_diff>dateDiff:3:3 dateDiff:3:3
timeStampAdd:2:2 timeStampSub:2:2 nowInBlock:1:1 rowNumberInBlock:0:0 rowNumberInAllBlocks:0:0 timeSlot:1:1
toYYYYMM:1:1 toYYYYMMDD:1:1 toYYYYMMDDhhmmss:1:1 addYears:2:2 addMonths:2:2 addWeeks:2:2 addDays:2:2 addHours:2:2
addMinutes:2:2 addSeconds:2:2 addQuarters:2:2 subtractYears:2:2 subtractMonths:2:2 subtractWeeks:2:2
subtractDays:2:2 subtractHours:2:2 subtractMinutes:2:2 subtractSeconds:2:2 subtractQuarters:2:2 timeSlots:2:3
formatDateTime:2:3 dateName:2:2 monthName:1:1 fromUnixTimestamp:1:1
toModifiedJulianDay>toModifiedJulianDayOrNull:1:1 fromModifiedJulianDay>fromModifiedJulianDayOrNull:1:1
now>@now:0:1:ci current_timestamp>@now:0:0 yesterday>@yesterday:0:0 today>@today:0:0 current_date>@today:0:0
toIntervalSecond:1:1 toIntervalMinute:1:1 toIntervalHour:1:1 toIntervalDay:1:1 toIntervalWeek:1:1
toIntervalMonth:1:1 toIntervalQuarter:1:1 toIntervalYear:1:1
date_part>@date_part:2:2 date_trunc>dateTrunc:2:3 dateTrunc:2:3 to_timestamp>@to_timestamp:1:2
to_char>formatDateTime:2:3:tz make_timestamp>makeDateTime:6:7:tz make_date>makeDate:3:3
make_interval>@make_interval:6:6 make_timestamptz>@make_timestamptz:7:7 timezone>@timezone:2:2 toTimeZone:1:2:tz
left>leftUTF8:2:2 right>rightUTF8:2:2 lengthUTF8:1:1 leftPad:2:3 rightPad:2:3 leftPadUTF8:2:3 rightPadUTF8:2:3
lower:1:1:ci upper:1:1:ci lowerUTF8:1:1 upperUTF8:1:1 isValidUTF8:1:1 toValidUTF8:1:1 format:2:* reverseUTF8:1:1
concat>@concat:1:*:ci substring:3:3:ci substringUTF8:3:3 appendTrailingCharIfAbsent:2:2 convertCharset:3:3
base58Encode:1:1 base58Decode:1:1 tryBase58Decode:1:1 base64Encode:1:1 base64Decode:1:1 tryBase64Decode:1:1
endsWith:2:2 startsWith:2:2 encodeXMLComponent:1:1 decodeXMLComponent:1:1 extractTextFromHTML:1:1 ascii:1:1:ci
concatWithSeparator:2:*
position:2:3:ci positionCaseInsensitive:2:3 positionUTF8:2:3 positionCaseInsensitiveUTF8:2:3
multiSearchAllPositions:2:2 multiSearchAllPositionsUTF8:2:2 multiSearchFirstPosition:2:2 multiSearchFirstIndex:2:2
multiSearchAny:2:2 multiSearchAllPositionsCaseInsensitive:2:2 multiSearchAllPositionsCaseInsensitiveUTF8:2:2
multiSearchAnyUTF8:2:2 multiSearchAnyCaseInsensitive:2:2 multiSearchAnyCaseInsensitiveUTF8:2:2
multiSearchFirstIndexUTF8:2:2 multiSearchFirstIndexCaseInsensitive:2:2 multiSearchFirstIndexCaseInsensitiveUTF8:2:2
multiSearchFirstPositionUTF8:2:2 multiSearchFirstPositionCaseInsensitive:2:2
multiSearchFirstPositionCaseInsensitiveUTF8:2:2 match:2:2 multiMatchAny:2:2 multiMatchAnyIndex:2:2
multiMatchAllIndices:2:2 multiFuzzyMatchAny:3:3 multiFuzzyMatchAnyIndex:3:3 multiFuzzyMatchAllIndices:3:3
extract:2:2:ci extractAll:2:2 extractAllGroupsHorizontal:2:2 extractAllGroupsVertical:2:2 extractGroups:2:2
like:2:2 ilike:2:2 notLike:2:2 notILike:2:2 locate:2:3 ngramDistance:2:2 ngramDistanceCaseInsensitive:2:2
ngramDistanceUTF8:2:2 ngramDistanceCaseInsensitiveUTF8:2:2 ngramSearch:2:2 ngramSearchCaseInsensitive:2:2
ngramSearchUTF8:2:2 ngramSearchCaseInsensitiveUTF8:2:2 countSubstrings:2:3 countSubstringsCaseInsensitive:2:3
countSubstringsCaseInsensitiveUTF8:2:3 countMatches:2:2 countMatchesCaseInsensitive:2:2 hasSubsequence:2:2
hasSubsequenceCaseInsensitive:2:2 hasSubsequenceUTF8:2:2 hasSubsequenceCaseInsensitiveUTF8:2:2 hasToken:2:2
hasTokenCaseInsensitive:2:2 hasTokenOrNull:2:2 hasTokenCaseInsensitiveOrNull:2:2 hasAllTokens:2:2 hasAnyTokens:2:2
regexpExtract:2:3
replace:3:3:ci replaceAll:3:3 replaceOne:3:3 replaceRegexpAll:3:3 replaceRegexpOne:3:3 regexpQuoteMeta:1:1
translate:3:3 translateUTF8:3:3 splitByChar:2:3 splitByString:2:3 splitByRegexp:2:3 splitByWhitespace:1:2
splitByNonAlpha:1:2 alphaTokens:1:2 extractAllGroups:2:2 ngrams:2:2 tokens:1:1
repeat:2:2 initcap:1:1 lpad>leftPad:3:3 rpad>rightPad:3:3 split_part>@split_part:3:3 ltrim>trimLeft:1:2
trimLeft:1:2 rtrim>trimRight:1:2 trimRight:1:2 btrim>@trim:1:2 trim>@trim:1:2:ci
isValidJSON:1:1 JSONHas:1:* JSONLength:1:* JSONArrayLength:1:* JSONType:1:* JSONExtract:2:* JSONExtractUInt:1:*
JSONExtractInt:1:* JSONExtractFloat:1:* JSONExtractBool:1:* JSONExtractString:1:* JSONExtractKey:1:*
JSONExtractKeys:1:* JSONExtractRaw:1:* JSONExtractArrayRaw:1:* JSONExtractKeysAndValues:1:3
JSONExtractKeysAndValuesRaw:1:* JSON_VALUE:2:*
e:0:0 pi:0:0 exp:1:1:ci log:1:1:ci ln:1:1:ci exp2:1:1 log2:1:1:ci exp10:1:1 log10:1:1:ci sqrt:1:1:ci cbrt:1:1
erf:1:1 erfc:1:1 lgamma:1:1 tgamma:1:1 sin:1:1:ci cos:1:1:ci tan:1:1:ci asin:1:1:ci acos:1:1:ci atan:1:1:ci
pow:2:2:ci power:2:2:ci intExp2:1:1 intExp10:1:1 cosh:1:1 acosh:1:1 sinh:1:1 asinh:1:1 atanh:1:1 atan2:2:2
hypot:2:2 log1p:1:1 sign:1:1:ci degrees:1:1:ci radians:1:1:ci factorial:1:1:ci width_bucket:4:4 floor:1:2:ci
ceil:1:2:ci trunc:1:2:ci round:1:2:ci roundBankers:1:2 roundToExp2:1:1 roundDuration:1:1 roundAge:1:1
roundDown:2:2 rand:0:0
greatCircleDistance:4:4 geoDistance:4:4 greatCircleAngle:4:4 pointInEllipses:6:* pointInPolygon:2:*
geohashEncode:2:3 geohashDecode:1:1 geohashesInBox:5:5 h3IsValid:1:1 h3GetResolution:1:1 h3GetBaseCell:1:1
h3EdgeAngle:1:1 h3EdgeLengthM:1:1 h3EdgeLengthKm:1:1 geoToH3:3:3 h3ToGeo:1:1 h3ToGeoBoundary:1:1 h3kRing:2:2
h3HexAreaM2:1:1 h3HexAreaKm2:1:1 h3IndexesAreNeighbors:2:2 h3ToChildren:2:2 h3ToParent:2:2 h3ToString:1:1
stringToH3:1:1 h3IsResClassIII:1:1 h3IsPentagon:1:1 h3GetFaces:1:1 h3CellAreaM2:1:1 h3CellAreaRads2:1:1
h3ToCenterChild:2:2 h3ExactEdgeLengthM:1:1 h3ExactEdgeLengthKm:1:1 h3ExactEdgeLengthRads:1:1 h3NumHexagons:1:1
h3PointDistM:4:4 h3PointDistKm:4:4 h3PointDistRads:4:4 h3GetRes0Indexes:0:0 h3GetPentagonIndexes:1:1 h3Line:2:2
h3Distance:2:2 h3HexRing:2:2 h3GetUnidirectionalEdge:2:2 h3UnidirectionalEdgeIsValid:1:1
h3GetOriginIndexFromUnidirectionalEdge:1:1 h3GetDestinationIndexFromUnidirectionalEdge:1:1
h3GetIndexesFromUnidirectionalEdge:1:1 h3GetUnidirectionalEdgesFromHexagon:1:1 h3GetUnidirectionalEdgeBoundary:1:1
equals:2:2 notEquals:2:2 less:2:2 greater:2:2 lessOrEquals:2:2 greaterOrEquals:2:2 in:2:2 notIn:2:2
and:2:* or:2:* xor:2:* not:1:1:ci if:3:3:ci multiIf:3:*
map:0:* mapFromArrays:2:2 mapAdd:2:* mapSubtract:2:* mapPopulateSeries:1:3 mapContains:2:2 mapKeys:1:1
mapValues:1:1 mapContainsKeyLike:2:2 mapExtractKeyLike:2:2 mapApply:2:2 mapFilter:2:2 mapUpdate:2:2
bitAnd:2:2 bitOr:2:2 bitXor:2:2 bitNot:1:1 bitShiftLeft:2:2 bitShiftRight:2:2 bitRotateLeft:2:2 bitRotateRight:2:2
bitSlice:3:3 bitTest:2:2 bitTestAll:3:* bitTestAny:3:* bitCount:1:1 bitHammingDistance:2:2
bitmapBuild:1:1 bitmapToArray:1:1 bitmapSubsetInRange:3:3 bitmapSubsetLimit:3:3 subBitmap:3:3 bitmapContains:2:2
bitmapHasAny:2:2 bitmapHasAll:2:2 bitmapCardinality:1:1 bitmapMin:1:1 bitmapMax:1:1 bitmapTransform:3:3
bitmapAnd:2:2 bitmapOr:2:2 bitmapXor:2:2 bitmapAndnot:2:2 bitmapAndCardinality:2:2 bitmapOrCardinality:2:2
bitmapXorCardinality:2:2 bitmapAndnotCardinality:2:2
protocol:1:1 domain:1:1 domainWithoutWWW:1:1 topLevelDomain:1:1 firstSignificantSubdomain:1:1
cutToFirstSignificantSubdomain:1:1 cutToFirstSignificantSubdomainWithWWW:1:1 port:1:2 path:1:1 pathFull:1:1
queryString:1:1 fragment:1:1 queryStringAndFragment:1:1 extractURLParameter:2:2 extractURLParameters:1:1
extractURLParameterNames:1:1 URLHierarchy:1:1 URLPathHierarchy:1:1 encodeURLComponent:1:1 decodeURLComponent:1:1
encodeURLFormComponent:1:1 decodeURLFormComponent:1:1 netloc:1:1 cutWWW:1:1 cutQueryString:1:1 cutFragment:1:1
cutQueryStringAndFragment:1:1 cutURLParameter:2:2
tuple:0:* tupleElement:2:3 untuple:1:1 tupleHammingDistance:2:2 tupleToNameValuePairs:1:1 tuplePlus:2:2
tupleMinus:2:2 tupleMultiply:2:2 tupleDivide:2:2 tupleNegate:1:1 tupleMultiplyByNumber:2:2 tupleDivideByNumber:2:2
dotProduct:2:2
isFinite:1:1 isInfinite:1:1 ifNotFinite:1:1 isNaN:1:1 bar:4:4 transform:3:4 formatReadableDecimalSize:1:1
formatReadableSize:1:1 formatReadableQuantity:1:1 formatReadableTimeDelta:1:2 least:2:2:ci greatest:2:2:ci
indexHint:1:1 extractIPv4Substrings:1:1
tumble>@window:2:2 hop>@window:3:3 tumbleStart>@window:1:3 tumbleEnd>@window:1:3 hopStart>@window:1:3
hopEnd>@window:1:3
L1Norm:1:1 L2Norm:1:1 LinfNorm:1:1 LpNorm:2:2 L1Distance:2:2 L2Distance:2:2 LinfDistance:2:2 LpDistance:3:3
L1Normalize:1:1 L2Normalize:1:1 LinfNormalize:1:1 LpNormalize:2:2 cosineDistance:2:2
rank:0:0 dense_rank:0:0 row_number:0:0 first_value:1:1 last_value:1:1 nth_value:2:2 lagInFrame:1:3
leadInFrame:1:3 lag>@lag:1:3 lead>@lead:1:3
`

const AGGREGATES = `
count:0:1:ci countIf:1:2 countState:0:1 countMerge:1:1 countStateIf:1:2 countDistinct:1:1 countDistinctIf:1:2
countMapIf:2:3 min:1:1:ci max:1:1:ci sum:1:1:ci avg:1:1:ci minIf:2:2 maxIf:2:2 sumIf:2:2 avgIf:2:2
sumForEach:1:1 minForEach:1:1 avgMap:1:1 avgMapIf:2:3 avgMapState:2:3 avgMapMerge:1:1 avgMapMergeIf:2:2 any:1:1
anyIf:2:2 stddevPop:1:1 stddevPopIf:2:2 stddevSamp:1:1 stddevSampIf:2:2 varPop:1:1 varPopIf:2:2 varSamp:1:1
varSampIf:2:2 covarPop:2:2 covarPopIf:3:3 covarSamp:2:2 covarSampIf:3:3 corr:2:2
array_agg>groupArray:1:1 groupArray:1:1 json_agg>@json_agg:1:1 string_agg>@string_agg:2:2 every>@every:1:1
anyHeavy:1:1 anyHeavyIf:2:2 anyLast:1:1 anyLastIf:2:2 argMin:2:2 argMax:2:2 argMinIf:3:3 argMaxIf:3:3
argMinMerge:1:1 argMaxMerge:1:1 argMinState:2:2 argMaxState:2:2 sumForEachState:1:1 sumForEachMerge:1:1
avgState:1:1 avgStateIf:2:2 avgMerge:1:1 avgMergeIf:2:2 avgWeighted:2:2 avgWeightedIf:3:3
avgArray>avgArrayOrNull:1:1 topK:1:1:p=1-1 groupArrayIf:2:2 groupUniqArray:1:1 groupUniqArrayIf:2:2
groupUniqArrayArray:1:1:p=0-1 groupUniqArrayArrayIf:2:2 groupArrayInsertAt:2:2 groupArrayInsertAtIf:3:3
groupArrayMovingAvg:1:1 groupArrayMovingAvgIf:2:2 groupArrayMovingSum:1:1 groupArrayMovingSumIf:2:2
groupArraySample:1:1:p=1-2 groupArraySampleIf:2:2 groupBitAnd:1:1 groupBitAndIf:2:2 groupBitOr:1:1
groupBitOrIf:2:2 groupBitXor:1:1 groupBitXorIf:2:2 groupBitmap:1:1 groupBitmapIf:2:2 groupBitmapState:1:1
groupBitmapAnd:1:1 groupBitmapAndState:1:1 groupBitmapOr:1:1 groupBitmapOrState:1:1 groupBitmapXor:1:1
sumWithOverflow:1:1 sumWithOverflowIf:2:2 deltaSum:1:1 deltaSumIf:2:2 deltaSumTimestamp:2:2
deltaSumTimestampIf:3:3 sumMap:1:2 sumMapIf:2:3 minMap:1:2 minMapIf:2:3 maxMap:1:2 maxMapIf:2:3 sumMapMerge:1:1
sumMapMergeIf:2:2 sumMerge:1:1 sumMergeIf:2:2 sumState:1:1 sumStateIf:2:2 medianArray>medianArrayOrNull:1:1
skewSamp:1:1 skewSampIf:2:2 skewPop:1:1 skewPopIf:2:2 kurtSamp:1:1 kurtSampIf:2:2 kurtPop:1:1 kurtPopIf:2:2
uniq:1:* uniqIf:2:* uniqExact:1:* uniqExactState:1:* uniqExactMerge:1:* uniqExactIf:2:* uniqHLL12:1:*
uniqHLL12If:2:* uniqTheta:1:* uniqThetaIf:2:* uniqMerge:1:1 uniqMergeIf:2:2 uniqMap:1:1 uniqMapMerge:1:1
uniqMapMergeIf:2:2 uniqState:1:1 uniqStateIf:2:2 uniqUpToMerge:1:1:p=1-1 median:1:1 medianIf:2:2
medianExact:1:1 medianExactIf:2:2 medianExactLow:1:1 medianExactLowIf:2:2 medianExactHigh:1:1
medianExactHighIf:2:2 medianExactWeighted:1:1 medianExactWeightedIf:2:2 medianTiming:1:1 medianTimingIf:2:2
medianTimingWeighted:1:1 medianTimingWeightedIf:2:2 medianDeterministic:1:1 medianDeterministicIf:2:2
medianTDigest:1:1 medianTDigestIf:2:2 medianTDigestWeighted:1:1 medianTDigestWeightedIf:2:2 medianBFloat16:1:1
medianBFloat16If:2:2 quantile:1:1:p=1-1 quantileIf:2:2:p=1-1 quantiles:1:*:p=1-99 quantilesIf:2:2:p=1-99
quantilesState:1:*:p=1-99 quantilesStateIf:2:2:p=1-99 quantilesMerge:1:*:p=1-99 quantilesMergeIf:2:2:p=1-99
quantileExact:1:1:p=1-1 simpleLinearRegression:2:2 simpleLinearRegressionIf:3:3 contingency:2:2 contingencyIf:3:3
cramersV:2:2 cramersVIf:3:3 cramersVBiasCorrected:2:2 cramersVBiasCorrectedIf:3:3 theilsU:2:2 theilsUIf:3:3
maxIntersections:2:2 maxIntersectionsIf:3:3 maxIntersectionsPosition:2:2 maxIntersectionsPositionIf:3:3
windowFunnel:1:99:p=1-99 md5>@md5:1:1 percentile_cont:0:0:p=1-1:wg percentile_disc:0:0:p=1-1:wg
`

function parseCatalogue(text: string, aggregate: boolean, into: Map<string, FunctionMeta>): void {
  for (const entry of text.split(/\s+/)) {
    if (!entry) continue
    const [head, min, max, ...flags] = entry.split(':')
    const [name, ch = name] = head.split('>')
    const meta: FunctionMeta = { name, ch, min: Number(min), max: max === '*' ? Number.POSITIVE_INFINITY : Number(max) }
    if (aggregate) meta.aggregate = true
    for (const f of flags) {
      if (f === 'ci') meta.ci = true
      else if (f === 'tz') meta.tz = true
      else if (f === 'wg') meta.withinGroup = true
      else if (f.startsWith('p=')) {
        const [a, b] = f.slice(2).split('-')
        meta.minParams = Number(a)
        meta.maxParams = Number(b)
      }
    }
    into.set(name, meta)
  }
}

const CATALOGUE = new Map<string, FunctionMeta>()
parseCatalogue(SCALARS, false, CATALOGUE)
parseCatalogue(AGGREGATES, true, CATALOGUE)
const CASE_INSENSITIVE = new Map<string, FunctionMeta>()
for (const meta of CATALOGUE.values()) if (meta.ci) CASE_INSENSITIVE.set(meta.name.toLowerCase(), meta)

/** Every name in the catalogue, in its order (the web app's SQL editor offers them for completion). */
export const FUNCTION_NAMES: readonly string[] = [...CATALOGUE.keys()]

/** Aggregates that accept the generated combinator suffixes (If, Array, Map, State, Merge, ForEach, …). */
const COMBINATOR_BASES: Record<string, number> = {
  avg: 1,
  sum: 1,
  min: 1,
  max: 1,
  count: 0,
  countDistinct: 1,
  median: 1,
}
const FIRST_SUFFIXES = ['Array', 'Map', 'State', 'Merge', 'ForEach', 'ArgMin', 'ArgMax', 'OrDefault', 'OrNull', 'If']

/** Resolves names like `sumArrayIf` or `countOrNullIf` built from an allowed base and suffix chain. */
function combinatorMeta(name: string): FunctionMeta | undefined {
  const base = Object.keys(COMBINATOR_BASES).find((b) => name.startsWith(b) && name.length > b.length)
  if (!base) return undefined
  let rest = name.slice(base.length)
  let extraArgs = 0
  let stage = 0 // 0: any first suffix; 1: after Array/Map/…: OrDefault/OrNull/If; 2: after OrX: If; 3: done
  while (rest) {
    const suffix = FIRST_SUFFIXES.find((s) => rest.startsWith(s))
    if (!suffix || stage === 3) return undefined
    if (suffix === 'If') stage = 3
    else if (suffix === 'OrDefault' || suffix === 'OrNull') {
      if (stage > 1) return undefined
      stage = 2
    } else {
      if (stage > 0) return undefined
      stage = 1
    }
    if (suffix === 'If' || suffix === 'ArgMin' || suffix === 'ArgMax') extraArgs++
    rest = rest.slice(suffix.length)
  }
  const baseMin = COMBINATOR_BASES[base]
  const baseMax = base === 'count' ? 1 : baseMin
  return { name, ch: name, min: baseMin + extraArgs, max: baseMax + extraArgs, aggregate: true }
}

export function findFunction(name: string): FunctionMeta | undefined {
  return CATALOGUE.get(name) ?? CASE_INSENSITIVE.get(name.toLowerCase()) ?? combinatorMeta(name)
}

/** Aggregate names allowed as the first argument of arrayReduce and friends. */
export const PARAMETRIC_FUNCTION_NAMES = new Set(
  'count countMap countMapState sum sumMap sumMapState min minMap minMapState max maxMap maxMapState avg avgState avgMap avgMapState median uniq uniqState uniqMap uniqMapState'.split(
    ' ',
  ),
)

function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]
    dp[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return dp[b.length]
}

/** Similarity of two names as Python's difflib measures it (Ratcliff/Obershelp: twice the matched characters over both lengths). */
function similarity(a: string, b: string): number {
  const matched = (x: string, y: string): number => {
    let best = 0
    let bi = 0
    let bj = 0
    for (let i = 0; i < x.length; i++) {
      for (let j = 0; j < y.length; j++) {
        let k = 0
        while (i + k < x.length && j + k < y.length && x[i + k] === y[j + k]) k++
        if (k > best) [best, bi, bj] = [k, i, j]
      }
    }
    if (best === 0) return 0
    return best + matched(x.slice(0, bi), y.slice(0, bj)) + matched(x.slice(bi + best), y.slice(bj + best))
  }
  return a.length + b.length === 0 ? 1 : (2 * matched(a, b)) / (a.length + b.length)
}

/** The candidate most like `name` (similarity at least 0.6, as difflib's close matches), for "Did you mean …" hints. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestScore = 0.6
  for (const candidate of candidates) {
    if (candidate === name) continue
    const score = similarity(name.toLowerCase(), candidate.toLowerCase())
    if (score >= bestScore && (best === undefined || score > bestScore)) {
      best = candidate
      bestScore = score
    }
  }
  return best
}

/** Closest catalogue name, for "Perhaps you meant …" hints (only computed on the error path). */
export function suggestFunction(name: string): string | undefined {
  const lower = name.toLowerCase()
  let best: string | undefined
  let bestScore = Math.max(2, Math.floor(name.length / 4)) + 1
  for (const candidate of CATALOGUE.keys()) {
    if (candidate.startsWith('_')) continue
    const score = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase())
    if (score < bestScore) {
      best = candidate
      bestScore = score
    }
  }
  return best
}

/** Validates the argument and parameter counts of a call against its catalogue entry. */
export function checkArity(meta: FunctionMeta, args: number, params: number | undefined, pos?: number): void {
  const { name, min, max } = meta
  if (min === max && args !== min) {
    throw new HogQLValidationError(
      `Function '${name}' expects ${min} argument${min === 1 ? '' : 's'}, found ${args}`,
      pos,
    )
  }
  if (args < min)
    throw new HogQLValidationError(`Function '${name}' expects at least ${min} arguments, found ${args}`, pos)
  if (args > max)
    throw new HogQLValidationError(`Function '${name}' expects at most ${max} arguments, found ${args}`, pos)
  if (meta.minParams === undefined) {
    if (params !== undefined) throw new HogQLValidationError(`Function '${name}' does not accept parameters`, pos)
    return
  }
  const kind = meta.aggregate ? 'Aggregation' : 'Function'
  if (params === undefined) {
    if (meta.minParams > 0) {
      throw new HogQLValidationError(`${kind} '${name}' requires parameters in addition to arguments`, pos)
    }
    return
  }
  const { minParams, maxParams = minParams } = meta
  if (minParams === maxParams && params !== minParams) {
    throw new HogQLValidationError(
      `${kind} '${name}' expects ${minParams} parameter${minParams === 1 ? '' : 's'}, found ${params}`,
      pos,
    )
  }
  if (params < minParams)
    throw new HogQLValidationError(`${kind} '${name}' expects at least ${minParams} parameters, found ${params}`, pos)
  if (params > maxParams)
    throw new HogQLValidationError(`${kind} '${name}' expects at most ${maxParams} parameters, found ${params}`, pos)
}
