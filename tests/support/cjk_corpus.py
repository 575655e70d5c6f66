# ruff: noqa: RUF001 (the texts are written with their own full-width punctuation)
"""Short Chinese, Japanese and Korean documents written for these tests, one topic each, and
queries whose answer is one of them (none of the query's runs is typed whole in it)."""

from __future__ import annotations

from pathlib import Path

TEXTS = {
    "zh-tea.txt": (
        "杭州西湖附近的龙井村以绿茶闻名。"
        "每年春天，茶农在清明节前采摘嫩芽，然后在铁锅里手工炒制。"
        "炒茶的温度很重要，太高会把叶子炒焦，太低则香气不足。"
        "新茶泡在玻璃杯里，叶片会慢慢舒展开来。"
    ),
    "zh-subway.txt": (
        "这座城市的地铁网络在过去十年里迅速扩张。"
        "早高峰时，二号线的车厢里挤满了上班族。"
        "为了减少拥挤，运营公司延长了列车编组，并缩短了发车间隔。"
        "很多乘客用手机扫码进站，不再购买纸质车票。"
    ),
    "zh-panda.txt": (
        "大熊猫几乎只吃竹子，每天要花十几个小时进食。"
        "因为竹子的营养很少，它们的活动量也很低。"
        "保护区的研究人员用红外相机记录野生熊猫的行踪。"
        "近年来，野外种群的数量有所回升。"
    ),
    "zh-bread.txt": (
        "自己在家烤面包并不难，但需要耐心。"
        "面团揉好以后要在温暖的地方发酵一个小时左右。"
        "发酵过度的面团会变酸，烤出来的面包也会塌陷。"
        "烤箱预热到二百度，烤三十分钟，表皮就会变得金黄酥脆。"
    ),
    "ja-onsen.txt": (
        "箱根は東京から電車で一時間半ほどの温泉地です。"
        "古い旅館では、夕食に地元の魚や山菜が出されます。"
        "露天風呂から富士山が見える宿も少なくありません。"
        "週末は観光客で混み合うので、平日に行くのがおすすめです。"
    ),
    "ja-bicycle.txt": (
        "去年から自転車で通勤するようになりました。"
        "片道は約八キロで、雨の日以外は毎朝走っています。"
        "最初は坂道がつらかったのですが、三か月ほどで慣れました。"
        "電車の混雑を避けられるうえ、運動不足の解消にもなります。"
    ),
    "ja-typhoon.txt": (
        "台風が近づくと、気象庁は早めに警報を出します。"
        "強い風で電線が切れ、停電になる地域もあります。"
        "窓ガラスが割れないように、雨戸を閉めておくと安心です。"
        "非常用の水と懐中電灯を用意しておきましょう。"
    ),
    "ja-miso.txt": (
        "味噌汁は日本の家庭料理の基本です。"
        "だしは昆布と鰹節から取るのが一般的ですが、煮干しを使う地方もあります。"
        "具には豆腐やわかめ、季節の野菜を入れます。"
        "味噌は沸騰させると風味が落ちるので、火を止める直前に溶き入れます。"
    ),
    "ko-subway.txt": (
        "서울의 지하철은 아침마다 몹시 붐빈다. 많은 직장인들이 버스 대신 지하철을 타고 출근한다."
    ),
    "en-otters.txt": "Otters swim in the river and eat fish near the bank.",
}
# Each query and the file that answers it.
QUERIES = {
    "熊猫吃竹子": "zh-panda.txt",
    "地铁早高峰很拥挤": "zh-subway.txt",
    "怎样炒绿茶": "zh-tea.txt",
    "面团发酵": "zh-bread.txt",
    "台風で停電したら": "ja-typhoon.txt",
    "富士山が見える温泉旅館": "ja-onsen.txt",
    "自転車通勤": "ja-bicycle.txt",
    "味噌汁のだし": "ja-miso.txt",
    "지하철로 출근하기": "ko-subway.txt",
}


def write_corpus(folder: Path) -> Path:
    """The documents as files in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in TEXTS.items():
        (folder / name).write_text(value + "\n", encoding="utf-8")
    return folder
